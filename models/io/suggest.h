#pragma once
// "did you mean" suggestions for a misspelled name: the one closest candidate by edit distance.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace traincast::io::detail {

/// Optimal string alignment distance: insertions, deletions, substitutions and transpositions of
/// adjacent characters ("bf61" -> "bf16" is 1) each cost 1.
std::size_t edit_distance(std::string_view a, std::string_view b);

/// `, did you mean "x"?` for the candidate closest to `name` by edit distance, when it is close
/// (distance <= max(1, |name| / 3)), else for the one candidate `name` begins (4+ characters);
/// empty otherwise.
std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates);

}  // namespace traincast::io::detail
