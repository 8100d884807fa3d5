#include "calibrate/bench/gemm.h"

#include "calibrate/bench/bench_util.h"

namespace traincast::bench {

const std::vector<GemmDtype>& gemm_dtypes() {
  static const std::vector<GemmDtype> dtypes = {
      {"fp32", CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, ElementType::f32, ElementType::f32, 4, 4, 0},
      {"tf32", CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, ElementType::f32, ElementType::f32, 4, 4, 80},
      {"fp16", CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, ElementType::f16, ElementType::f16, 2, 2, 0},
      {"bf16", CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, ElementType::bf16, ElementType::bf16, 2, 2, 80},
      {"fp8", CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, ElementType::fp8_e4m3, ElementType::bf16, 1, 2, 89},
  };
  return dtypes;
}

std::string cublas_status_text(cublasStatus_t status) {
  const char* s = cublasLtGetStatusString(status);
  return s ? s : ("cublasStatus " + std::to_string(static_cast<int>(status)));
}

namespace {

void check(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) throw BenchError(std::string(what) + ": " + cublas_status_text(status));
}

}  // namespace

GemmProblem::GemmProblem(cublasLtHandle_t handle, const GemmDtype& dtype, int64_t m, int64_t n, int64_t k,
                         const void* a, const void* b, void* c, void* workspace, size_t workspace_bytes)
    : handle_(handle), a_(a), b_(b), c_(c), workspace_(workspace), workspace_bytes_(workspace_bytes) {
  check(cublasLtMatmulDescCreate(&op_, dtype.compute, CUDA_R_32F), "cublasLtMatmulDescCreate");
  const cublasOperation_t transa = CUBLAS_OP_T;
  const cublasOperation_t transb = CUBLAS_OP_N;
  check(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof transa), "set TRANSA");
  check(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof transb), "set TRANSB");
  check(cublasLtMatrixLayoutCreate(&a_layout_, dtype.ab_type, static_cast<uint64_t>(k), static_cast<uint64_t>(m), k),
        "cublasLtMatrixLayoutCreate(A)");
  check(cublasLtMatrixLayoutCreate(&b_layout_, dtype.ab_type, static_cast<uint64_t>(k), static_cast<uint64_t>(n), k),
        "cublasLtMatrixLayoutCreate(B)");
  check(cublasLtMatrixLayoutCreate(&c_layout_, dtype.cd_type, static_cast<uint64_t>(m), static_cast<uint64_t>(n), m),
        "cublasLtMatrixLayoutCreate(C)");
  cublasLtMatmulPreference_t pref = nullptr;
  check(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
  const uint64_t ws = workspace_bytes;
  cublasStatus_t status =
      cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  if (status == CUBLAS_STATUS_SUCCESS) {
    status = cublasLtMatmulAlgoGetHeuristic(handle_, op_, a_layout_, b_layout_, c_layout_, c_layout_, pref, 1, &result,
                                            &found);
  }
  cublasLtMatmulPreferenceDestroy(pref);
  if (status != CUBLAS_STATUS_SUCCESS) {
    why_ = "cublasLtMatmulAlgoGetHeuristic: " + cublas_status_text(status);
  } else if (found == 0) {
    why_ = "cublasLtMatmulAlgoGetHeuristic found no algorithm";
  } else {
    algo_ = result.algo;
    supported_ = true;
  }
}

GemmProblem::~GemmProblem() {
  if (c_layout_) cublasLtMatrixLayoutDestroy(c_layout_);
  if (b_layout_) cublasLtMatrixLayoutDestroy(b_layout_);
  if (a_layout_) cublasLtMatrixLayoutDestroy(a_layout_);
  if (op_) cublasLtMatmulDescDestroy(op_);
}

void GemmProblem::run(cudaStream_t stream) const {
  const float alpha = 1.0f;
  const float beta = 0.0f;
  check(cublasLtMatmul(handle_, op_, &alpha, a_, a_layout_, b_, b_layout_, &beta, c_, c_layout_, c_, c_layout_, &algo_,
                       workspace_, workspace_bytes_, stream),
        "cublasLtMatmul");
}

}  // namespace traincast::bench
