// The text form of FitOptions recorded in a profile. See fit_options.h.

#include "calibrate/fit/fit_options.h"

#include <sstream>
#include <stdexcept>
#include <string>

#include "calibrate/fit/fit_helpers.h"
#include "models/collectives/nccl_tests.h"

namespace traincast::calibrate {

std::string fit_options_text(const FitOptions& o) {
  std::string s = std::string("holdout=") + (o.holdout == Holdout::odd    ? "odd"
                                             : o.holdout == Holdout::even ? "even"
                                                                          : "none");
  if (!o.gpus.empty()) {
    s += "; gpus=";
    s += gpu_list_text(o.gpus);
  }
  return s;
}

void apply_fit_options_text(const std::string& text, FitOptions& o) {
  std::istringstream in(text);
  for (std::string item; std::getline(in, item, ';');) {
    while (!item.empty() && item.front() == ' ') item.erase(item.begin());
    if (item == "holdout=odd") o.holdout = Holdout::odd;
    if (item == "holdout=even") o.holdout = Holdout::even;
    if (item == "holdout=none") o.holdout = Holdout::none;
    if (item.rfind("gpus=", 0) == 0) {
      try {
        o.gpus = models::parse_gpu_list(item.substr(5));
      } catch (const std::invalid_argument&) {
      }
    }
  }
}

}  // namespace traincast::calibrate
