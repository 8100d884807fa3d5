#include "models/io/suggest.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace traincast::io::detail {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  const std::size_t n = a.size();
  const std::size_t m = b.size();
  std::vector<std::size_t> d((n + 1) * (m + 1));
  auto at = [&](std::size_t i, std::size_t j) -> std::size_t& { return d[i * (m + 1) + j]; };
  for (std::size_t i = 0; i <= n; ++i) at(i, 0) = i;
  for (std::size_t j = 0; j <= m; ++j) at(0, j) = j;
  for (std::size_t i = 1; i <= n; ++i) {
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      at(i, j) = std::min({at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        at(i, j) = std::min(at(i, j), at(i - 2, j - 2) + 1);
      }
    }
  }
  return at(n, m);
}

std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates) {
  if (name.empty() || name.size() > 64) return {};
  std::size_t best_distance = std::max<std::size_t>(1, name.size() / 3) + 1, prefixed = 0;
  const std::string *best = nullptr, *begun = nullptr;  // else the one candidate `name` begins (issue 21)
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  for (const std::string& c : candidates) {
    // The name in another case ("KERNEL", "CUDNN"): the candidate itself, whatever its length.
    if (lower != name && lower == c) return ", did you mean \"" + c + "\"?";
  }
  for (const std::string& c : candidates) {
    const std::size_t d = edit_distance(name, c);
    if (d < best_distance) best_distance = d, best = &c;
    if (name.size() >= 4 && c.size() > name.size() && c.compare(0, name.size(), name) == 0) ++prefixed, begun = &c;
  }
  if (best == nullptr && prefixed == 1) best = begun;
  return best == nullptr ? std::string() : ", did you mean \"" + *best + "\"?";
}

}  // namespace traincast::io::detail
