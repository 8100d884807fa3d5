#pragma once
// options.threads (docs/scenarios.md, `threads`) as every parallel loop of one run reads it: the
// Monte-Carlo failure draws here, and in models/executor the ECMP draws and the op-graph builder.
// 0 = automatic: the loops run on the TBB arena the caller is in (all hardware threads for
// `traincast run`; inside a command that runs simulations in parallel, that command's arena, so
// nothing is oversubscribed). 1 = the calling thread alone (no TBB). N >= 2 = an arena of N
// threads (the caller and N - 1 workers). The result never depends on it.

#include <algorithm>
#include <cstddef>
#include <utility>

#include <tbb/info.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

namespace traincast::models {

/// Runs f() where the loops below may use `threads` threads: on the caller's arena for 0, 1 or an
/// arena already of that many threads (so a nested call adds no arena), else in a new arena of
/// `threads`. Exceptions from f reach the caller (TBB rethrows them from execute).
/// More threads than the machine has run on all of its hardware threads (an arena asking for more
/// workers than TBB may create prints a warning and gets no more).
template <class F>
decltype(auto) with_worker_threads(int threads, F&& f) {
  const int n = std::min(threads, tbb::info::default_concurrency());
  if (n <= 1 || tbb::this_task_arena::max_concurrency() == n) return std::forward<F>(f)();
  tbb::task_arena arena(n);
  return arena.execute(std::forward<F>(f));
}

/// Calls body(i) for i in [0, n): in order on the calling thread for threads == 1, else with
/// tbb::parallel_for on the current arena (with_worker_threads set it up). Results must not
/// depend on the order: callers store by index and reduce in index order.
template <class Index, class Body>
void for_each_index(int threads, Index n, const Body& body) {
  if (threads == 1) {
    for (Index i = 0; i < n; ++i) body(i);
  } else {
    tbb::parallel_for(Index{0}, n, body);
  }
}

/// The loops' concurrency under `threads` (for batch sizes): 1, or the current arena's.
inline int worker_thread_count(int threads) { return threads == 1 ? 1 : tbb::this_task_arena::max_concurrency(); }

}  // namespace traincast::models
