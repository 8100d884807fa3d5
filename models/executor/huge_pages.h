#pragma once
// A hint for the op graph's largest arrays (hundreds of MB for the unfolded SC21 1T run): back
// them with transparent huge pages, so that writing them first takes one page fault per 2 MiB
// instead of one per 4 KiB.

#include <cstddef>
#include <cstdint>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace traincast::models {

/// Asks the kernel to back the 2 MiB-aligned part of [data, data + bytes) with transparent huge
/// pages (Linux with THP "madvise" or "always"). A hint: contents, addresses and results are
/// unchanged; elsewhere, or when the kernel refuses, nothing happens. Only pages written are
/// ever backed, so reserving more than is used costs no more memory than before.
inline void advise_huge_pages(const void* data, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t kHugePageBytes = std::uintptr_t{2} << 20;  // x86-64 / arm64 (4 KiB granule) PMD size
  const auto first = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t begin = (first + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  const std::uintptr_t end = (first + bytes) & ~(kHugePageBytes - 1);
  // The aligned address as data plus an offset (no integer-to-pointer cast); madvise takes a
  // non-const pointer but changes no byte.
  if (end > begin)
    (void)madvise(const_cast<char*>(static_cast<const char*>(data)) + (begin - first), end - begin, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

/// Asks the kernel to back the whole pages within [data, data + bytes) now, as a first write
/// would (Linux 5.14+ MADV_POPULATE_WRITE): called on another thread ahead of the writer, it moves
/// the page faults and the kernel's zeroing of new pages off the writer's thread. Changes no byte
/// (pages already backed stay as they are), so it may run while the range is being written; where
/// the call is unknown or refused, nothing happens.
inline void populate_pages(const void* data, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
  constexpr std::uintptr_t kPageBytes = 4096;
  const auto first = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t begin = (first + kPageBytes - 1) & ~(kPageBytes - 1);
  const std::uintptr_t end = (first + bytes) & ~(kPageBytes - 1);
  if (end > begin)
    (void)madvise(const_cast<char*>(static_cast<const char*>(data)) + (begin - first), end - begin,
                  MADV_POPULATE_WRITE);
#else
  (void)data;
  (void)bytes;
#endif
}

/// v.assign(n, value) with v's new buffer advised for huge pages before it is written.
template <typename T>
void assign_huge(std::vector<T>& v, std::size_t n, const T& value) {
  std::vector<T>().swap(v);
  v.reserve(n);
  advise_huge_pages(v.data(), n * sizeof(T));
  v.assign(n, value);
}

}  // namespace traincast::models
