// Fitting calibration profiles: the entry point that assembles a profile from its parts. See
// profile_fit.h.

#include "calibrate/fit/profile_fit.h"

#include <stdexcept>
#include <string>

#include "calibrate/fit/bandwidth_fit.h"
#include "calibrate/fit/collective_fit.h"
#include "calibrate/fit/fit_helpers.h"
#include "calibrate/fit/gemm_fit.h"
#include "calibrate/fit/power_fit.h"
#include "models/hardware/catalog.h"

namespace traincast::calibrate {

models::CalibrationProfile fit_profile(const models::MeasurementSet& m, const FitOptions& o,
                                       std::vector<std::string>* notes) {
  models::CalibrationProfile out;
  out.base = o.base;
  out.fit_options = fit_options_text(o);
  fit_collectives(m, o, out, notes);
  fit_gemm(m, o, out, notes);
  fit_bandwidth_and_launch(m, o, out, notes);
  const bool compute = !m.gemm.empty() || !m.bandwidth.empty() || m.launch_back_to_back_s > 0;
  if (compute) out.gpu = o.gpu;
  if (!m.power.empty()) {
    if (o.gpu.empty()) throw std::invalid_argument("burn samples need a GPU: --base must name a catalog GPU");
    const BurnFit burn =
        fit_burn(m.power, models::find_gpu(o.gpu), m.sm_clock_max_mhz, o.holdout != Holdout::none, notes);
    out.power_thermal = burn.overlay;
    out.gpu = o.gpu;
  }
  // What it was fitted on: the base's GPU, node template, nodes, NIC and the GPUs used.
  out.fitted_on.gpu = o.gpu;
  if (o.gpu.empty() && o.cluster)
    out.fitted_on.gpu = o.cluster->gpu.empty() ? models::cluster_node_template(*o.cluster).gpu : o.cluster->gpu;
  if (o.cluster) {
    out.fitted_on.node_template = o.cluster->node_template;
    out.fitted_on.num_nodes = o.cluster->num_nodes;
    out.fitted_on.nic = o.cluster->nic;
  }
  out.fitted_on.gpus += gpu_list_text(o.gpus);
  return out;
}

}  // namespace traincast::calibrate
