// Helpers shared by the profile fit files. See fit_helpers.h.

#include "calibrate/fit/fit_helpers.h"

#include <algorithm>

namespace traincast::calibrate {

const char* link_name(models::LinkKind k) {
  static const char* names[] = {"other", "NVLink", "PCIe", "socket", "NIC", "fabric"};
  return names[static_cast<int>(k)];
}

bool is_fit(Holdout h, std::size_t i) {
  if (h == Holdout::none) return true;
  return (i % 2 == 0) == (h == Holdout::odd);
}

double median(std::vector<double> v) {
  if (v.empty()) return 1.0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string gpu_list_text(const std::vector<int>& gpus) {
  std::string s;
  // Appended, not (i ? "," : "") + ...: bogus GCC 12 -Wrestrict (GCC bug 105651).
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    s += i ? "," : "";
    s += std::to_string(gpus[i]);
  }
  return s;
}

}  // namespace traincast::calibrate
