// The one dispatch on the model family: which generator builds a scenario's programs and counts
// its FLOPs (transformer.h or cnn.h), and the helpers both generators share.
#include "models/workload/layer_program.h"

#include "models/workload/cnn.h"
#include "models/workload/transformer.h"

namespace traincast::models {

ModelPrograms build_layer_programs(const Scenario& sc, const GpuSpec& gpu, const ComputeParams& params) {
  if (sc.model.family == ModelFamily::resnet) return build_resnet_programs(sc, gpu, params);
  return build_transformer_programs(sc, gpu, params);
}

double model_flops_per_iteration(const Scenario& sc) {
  if (sc.model.family == ModelFamily::resnet) return resnet_model_flops_per_iteration(sc);
  return transformer_model_flops_per_iteration(sc);
}

double hardware_flops_per_iteration(const Scenario& sc) {
  // ResNet: no recomputation; the stem's skipped data gradient (0.3% of the FLOPs) is ignored.
  if (sc.model.family == ModelFamily::resnet) return resnet_model_flops_per_iteration(sc);
  return transformer_hardware_flops_per_iteration(sc);
}

double tokens_per_sample(const ModelSpec& m) {
  return m.family == ModelFamily::resnet ? 1.0 : static_cast<double>(m.seq_length);
}

double activation_bytes_per_element(Precision precision) {
  return (precision == Precision::fp32 || precision == Precision::tf32) ? 4.0 : 2.0;
}

}  // namespace traincast::models
