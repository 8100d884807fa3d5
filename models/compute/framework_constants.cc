#include "models/compute/framework_constants.h"

namespace traincast::models {

const FrameworkConstants& framework_constants() {
  // Fitted pooled on the fit half (even data rows, docs/accuracy_split.md) of the four gated
  // training sources (Megatron group, BLOOM, MPT, torchtitan: 184 rows), each source weighted
  // equally, least squares of the log throughput error; rows, procedure and before/after tables:
  // models/calibration/framework_constants.md. Refitted (0.706 -> 0.711) with NCCL's kernels taking
  // SMs from the compute they overlap (op_graph.h worker_sms), by the same procedure; refitted
  // again (0.711 -> 0.717) after the attention shape model (attention_model.h), then (0.717 -> 0.723)
  // after torchtitan's op-level recompute and the H200 rows and back (0.723 -> 0.717) after BLOOM
  // rows 51-53's global batch, then (0.717 -> 0.715) after the fp8 recipes' TP gathers and rowwise
  // backward rescales (fp8_recipe.h), same procedure, then (0.715 -> 0.716) after async TP as
  // PyTorch's per-chunk pipeline (transformer_programs.cc, tp_overlap_implementation async_tp),
  // then (0.716 -> 0.715) after its chunk copies at copy-engine speed (CollectiveEngine::
  // start_peer_copy), then (0.715 -> 0.730) after the mechanisms of sessions 26-31 (not refitted
  // then) and torchtitan's 96 GB HBM2e H100 (catalog H100-SXM5-96GB), same procedure.
  static const FrameworkConstants kConstants{
      .in_framework_efficiency = 0.730,
  };
  return kConstants;
}

double framework_segment_seconds(double kernel_seconds) {
  return kernel_seconds / framework_constants().in_framework_efficiency;
}

}  // namespace traincast::models
