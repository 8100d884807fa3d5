// ProgramBuilder (program_builder.h): compute segments timed by the compute model.
#include "models/workload/program_builder.h"

#include <utility>

#include "models/compute/framework_constants.h"

namespace traincast::models {

ProgramBuilder::ProgramBuilder(const GpuSpec& gpu, const ComputeParams& params, const TrainingSpec& training)
    : gpu_(gpu),
      params_(with_compute_model(params, training)),
      precision_(training.precision),
      recipe_(fp8_recipe_cost(training.fp8_recipe)) {
  // The recipe's main-loop factors scale the fp8 GEMM efficiency of whichever model applies.
  fp8_params_.gemm_efficiency *= recipe_.forward_main_loop_factor;
  fp8_params_.kernel_gemm_fp8_efficiency *= recipe_.forward_main_loop_factor;
  fp8_backward_params_.gemm_efficiency *= recipe_.backward_main_loop_factor;
  fp8_backward_params_.kernel_gemm_fp8_efficiency *= recipe_.backward_main_loop_factor;
}

void ProgramBuilder::compute(Program& p, const std::string& label, const std::vector<Kernel>& kernels,
                             double weight_cast_share) {
  Segment seg;
  seg.label = label;
  double kernel_s = 0;
  for (const Kernel& k : kernels) {
    const bool fp8_gemm = precision_ == Precision::fp8 && k.kind == KernelKind::gemm && !bf16_gemms_;
    const Precision math =
        precision_ == Precision::fp8 && k.kind == KernelKind::gemm && bf16_gemms_ ? Precision::bf16 : precision_;
    const ComputeParams& params = !fp8_gemm ? params_ : backward_ ? fp8_backward_params_ : fp8_params_;
    kernel_s += kernel_seconds(k, gpu_, params, math);
    seg.compute_bound_seconds += kernel_compute_bound_seconds(k, gpu_, params, math);
    seg.flops += k.flops;
    if (fp8_gemm && k.m > 0) {
      // The recipe's cast/amax/transpose of both GEMM inputs: one memory-bound kernel.
      const Kernel cast{KernelKind::elementwise, 0,
                        recipe_.cast_bytes_per_operand_element * (k.m * k.k + weight_cast_share * k.k * k.n)};
      kernel_s += kernel_seconds(cast, gpu_, params_, precision_);
      // Rowwise backward GEMMs: the output's rescale, a memory-bound kernel of its own.
      if (backward_ && recipe_.backward_rescale_bytes_per_output_element > 0) {
        const Kernel rescale{KernelKind::elementwise, 0, recipe_.backward_rescale_bytes_per_output_element * k.m * k.n};
        kernel_s += kernel_seconds(rescale, gpu_, params_, precision_);
      }
    }
  }
  seg.seconds = params_.use_kernel_model ? framework_segment_seconds(kernel_s) : kernel_s;
  p.push_back(std::move(seg));
}

}  // namespace traincast::models
