#pragma once
// What `traincast compare` says about its columns' inputs besides their own warnings (session 42,
// kept apart from compare.cc/compare_format.cc): a --set price that every column takes although
// their hardware differs, and columns of different cooling billed at one default PUE.

#include <iosfwd>
#include <string>
#include <vector>

#include "tools/cli/compare.h"

namespace traincast::cli {

/// Warns (stderr, "warning: --set: ...") of each --set of a hardware price that lands on columns
/// whose hardware differs: cost.node_price_usd where their node templates (or GPUs per node)
/// differ, cost.cloud_price_per_gpu_hour_usd where their GPUs differ, naming each column's. One
/// price for all of them prices all but one as something else (fresh user, session 42: a GB200
/// NVL72 rack's USD 3.4M charged per 8-GPU B200 server). `sets` are the --set assignments as given.
void warn_prices_set_for_unlike_columns(const std::vector<CompareInput>& in, const std::vector<std::string>& sets,
                                        std::ostream& err);

/// "PUE: ..." (a paragraph, ending in a newline) where a liquid-cooled column and an air-cooled one
/// both run at power.pue's default (not written in the scenario nor by --set: PowerSpec::given;
/// a `pue: 1.58` the user wrote is theirs): cooling does not change PUE (docs/scenarios.md), so their
/// facility power differs by IT power alone; it says so, the default's source, and how to give
/// each its own. "" otherwise.
std::string cooling_pue_note(const std::vector<CompareInput>& in);

/// Per input: that paragraph's text (after "PUE: ", without the newline) for each column it names
/// (the liquid-cooled and the air-cooled ones at the default PUE), "" for the others and for all
/// when there is no note: compare's JSON and CSV `pue_note` (CompareRow::pue_note).
std::vector<std::string> cooling_pue_row_notes(const std::vector<CompareInput>& in);

}  // namespace traincast::cli
