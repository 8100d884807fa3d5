// The summary's "Cost (USD)" section (summary_cost.h).

#include "tools/cli/summary_cost.h"

#include <sstream>
#include <string>

#include "tools/cli/summary.h"

namespace traincast::cli {
namespace {

/// "$3.990": appended, not "$" + ... (bogus GCC 12 -Wrestrict, GCC bug 105651).
std::string dollars(double v, int decimals) {
  std::string s = "$";
  s += format_fixed(v, decimals);
  return s;
}

}  // namespace

std::string format_cost(const models::CostReport& c) {
  if (!c.modelled) return "";
  std::ostringstream o;
  auto usd = [](double v) {
    std::string s = "$";
    s += with_thousands(v);  // not "$" + ...: bogus GCC 12 -Wrestrict (see summary.cc signed_fixed)
    return s;
  };
  o << "\nCost (USD):\n";
  // A "base/N" partition's nodes are bought as whole racks (servers): "1 gb200_nvl72 rack for 2 nodes".
  const std::string& unit = c.node_price_unit;
  const std::string bought =
      unit.find(", ") == std::string::npos
          ? count_of(c.nodes, "node")
          : count_of(c.units_bought, unit.substr(0, unit.find(" of "))) + " for " + count_of(c.nodes, "node");
  if (c.own_modelled)
    o << "  capex         " << usd(c.capex_usd) << " (" << bought << ", " << count_of(c.switches, "switch") << ", "
      << count_of(c.cables, "cable") << "): " << usd(c.capex_per_year_usd) << "/year amortised + "
      << usd(c.upkeep_per_year_usd) << "/year upkeep + " << usd(c.energy_per_year_usd) << "/year energy\n";
  o << "  per GPU-hour  own " << (c.own_modelled ? dollars(c.own_cost_per_gpu_hour_usd, 3) : std::string("not priced"))
    << " vs rent " << (c.rent_modelled ? dollars(c.cloud_price_per_gpu_hour_usd, 3) : std::string("not priced"))
    << "\n";
  if (c.train_gpu_hours > 0)
    o << "  to train      " << with_thousands(c.train_gpu_hours) << " GPU-hours: own "
      << (c.own_modelled ? usd(c.own_cost_to_train_usd) : std::string("not priced")) << ", rent "
      << (c.rent_modelled ? usd(c.cloud_cost_to_train_usd) : std::string("not priced")) << "\n";
  if (c.own_modelled && c.rent_modelled)
    o << "  buy vs rent   payback "
      << (c.payback_never ? std::string("never") : format_fixed(c.payback_years, 2) + " years")
      << (c.payback_years > c.amortization_years ? " (beyond the " + format_fixed(c.amortization_years, 1) +
                                                       "-year amortisation: not within the hardware's life)"
                                                 : std::string())
      << (c.breakeven_utilization > 0 && c.breakeven_utilization <= 1
              ? "; break-even at " + format_fixed(100 * c.breakeven_utilization, 1) + "% utilisation"
              : std::string("; renting is cheaper even at 100% utilisation"))
      << "\n";
  if (!c.node_price_source.empty()) o << "  node price    " << price_source_text(c, false) << "; per " << unit << "\n";
  if (!c.cloud_price_source.empty()) o << "  rent          " << price_source_text(c, true) << "\n";
  if (!c.note.empty()) o << "  note          " << c.note << "\n";
  return o.str();
}

std::string price_source_text(const models::CostReport& c, bool rent) {
  const std::string& source = rent ? c.cloud_price_source : c.node_price_source;
  const bool given = source == "scenario" || source.starts_with("--");  // "--set", "--vary" (name_price_options)
  if (rent)
    return given ? "USD " + format_fixed(c.cloud_price_per_gpu_hour_usd, 3) + "/GPU-hour (" + source + ")" : source;
  return given ? "USD " + with_thousands(c.node_price_usd) + " (" + source + ")" : source;
}

}  // namespace traincast::cli
