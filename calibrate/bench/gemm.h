#pragma once
// One cuBLASLt GEMM problem (D = A^T B, the "TN" layout that cuBLASLt's FP8 kernels require, used
// for every dtype so that dtypes are compared on the same layout), shared by the GEMM grid and the
// power burn.

#include <cublasLt.h>

#include <cstdint>
#include <string>
#include <vector>

#include "calibrate/bench/kernels.h"

namespace traincast::bench {

/// A GEMM dtype as the measurement file names it, with its cuBLASLt types.
struct GemmDtype {
  const char* name;             ///< fp32, tf32, fp16, bf16, fp8
  cudaDataType_t ab_type;       ///< A and B
  cudaDataType_t cd_type;       ///< C and D
  cublasComputeType_t compute;  ///< accumulation
  ElementType ab_fill, cd_fill;
  size_t ab_bytes, cd_bytes;  ///< bytes per element
  int min_capability;         ///< 10 * major + minor; fp8 needs 89 (Ada) or later (cuBLASLt docs)
};

/// fp32 (CUDA cores), tf32, fp16, bf16 (fp32 accumulation, 16-bit output), fp8 (e4m3 inputs, fp32
/// accumulation, bf16 output, unit scales).
const std::vector<GemmDtype>& gemm_dtypes();

/// Descriptors and the heuristic's first algorithm for one (dtype, m, n, k) on buffers the caller
/// owns: a holds k x m (lda = k), b holds k x n (ldb = k), c holds m x n (ldc = m), column-major.
class GemmProblem {
 public:
  GemmProblem(cublasLtHandle_t handle, const GemmDtype& dtype, int64_t m, int64_t n, int64_t k, const void* a,
              const void* b, void* c, void* workspace, size_t workspace_bytes);
  ~GemmProblem();
  GemmProblem(const GemmProblem&) = delete;
  GemmProblem& operator=(const GemmProblem&) = delete;

  /// False when cuBLASLt has no algorithm for it (why() says what it answered).
  bool supported() const { return supported_; }
  const std::string& why() const { return why_; }

  /// Enqueues one GEMM on `stream`; throws BenchError when cuBLASLt refuses.
  void run(cudaStream_t stream) const;

 private:
  cublasLtHandle_t handle_;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_layout_ = nullptr, b_layout_ = nullptr, c_layout_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  const void* a_;
  const void* b_;
  void* c_;
  void* workspace_;
  size_t workspace_bytes_;
  bool supported_ = false;
  std::string why_;
};

/// "name: status string" of a cuBLAS status.
std::string cublas_status_text(cublasStatus_t status);

}  // namespace traincast::bench
