#pragma once
// Appends the segments of a per-rank program (layer_program.h): compute segments timed by the
// compute model (with the fp8 recipe's casts and rescales, and the fitted in-framework efficiency
// under compute_model kernel) and collective segments. Used by the transformer generator
// (transformer_programs.cc).

#include <initializer_list>
#include <string>
#include <vector>

#include "models/compute/compute_model.h"
#include "models/workload/fp8_recipe.h"
#include "models/workload/layer_program.h"

namespace traincast::models {

/// Builds the segments of one scenario's programs on one GPU type.
class ProgramBuilder {
 public:
  ProgramBuilder(const GpuSpec& gpu, const ComputeParams& params, const TrainingSpec& training);

  /// GEMMs appended from now on run in bf16 without fp8 casts (the logit layer: fp8_recipe.h).
  void keep_gemms_in_bf16() { bf16_gemms_ = true; }
  /// GEMMs appended from now on are backward GEMMs (input and weight gradients: the recipe's
  /// backward kernels, fp8_recipe.h) or, with false, forward ones (forward and recompute).
  void backward_gemms(bool on) { backward_ = on; }

  /// Appends a compute segment made of the given kernels. `weight_cast_share`: the share of each
  /// fp8 GEMM's weight cast this segment pays (1 / chunks for the row slices of a chunked TP
  /// overlap: the weight is cast once, its GEMM runs in slices).
  void compute(Program& p, const std::string& label, std::initializer_list<Kernel> kernels) {
    compute(p, label, std::vector<Kernel>(kernels));
  }
  void compute(Program& p, const std::string& label, const std::vector<Kernel>& kernels, double weight_cast_share = 1);
  static void collective(Program& p, const std::string& label, CollectiveOp op, double bytes, Overlap overlap,
                         CommGroup group = CommGroup::tp) {
    Segment seg;
    seg.group = group;
    seg.is_collective = true;
    seg.label = label;
    seg.op = op;
    seg.bytes = bytes;
    seg.overlap = overlap;
    p.push_back(std::move(seg));
  }

 private:
  const GpuSpec& gpu_;
  ComputeParams params_;
  Precision precision_;
  Fp8RecipeCost recipe_;
  ComputeParams fp8_params_ = params_;           ///< params_ with the recipe's forward main-loop factor
  ComputeParams fp8_backward_params_ = params_;  ///< params_ with the recipe's backward main-loop factor
  bool bf16_gemms_ = false;
  bool backward_ = false;
};

}  // namespace traincast::models
