// Sampled functions sorted into the parts of a layer (src/placement/code_parts.cpp): OpenBLAS's
// kernels and packing copies by their naming on any core, the engine's im2col, OpenMP's
// stripped runtime, libc's copies, the OS kernel, JIT code from a perf map.
#include "placement/code_parts.hpp"

#include <gtest/gtest.h>
#include "common/stages.hpp"

namespace hwprof::profile {
namespace {

TEST(CodePartsTest, OpenBlasKernelsAndPackingOnAnyCore) {
  EXPECT_EQ(code_part_of("sgemm_kernel_HASWELL", "libopenblas.so.0"), CodePart::gemm_kernel);
  EXPECT_EQ(code_part_of("dgemm_kernel_SKYLAKEX", "libopenblasp-r0.3.21.so"), CodePart::gemm_kernel);
  EXPECT_EQ(code_part_of("sgemm_small_kernel_nn_SKYLAKEX", "libopenblas.so.0"), CodePart::gemm_kernel);
  EXPECT_EQ(code_part_of("sgemm_itcopy_HASWELL", "libopenblas.so.0"), CodePart::gemm_packing);
  EXPECT_EQ(code_part_of("sgemm_oncopy_ZEN", "libopenblas.so.0"), CodePart::gemm_packing);
  EXPECT_EQ(code_part_of("zgemm_incopy_SANDYBRIDGE", "libopenblas.so.0"), CodePart::gemm_packing);
  EXPECT_EQ(code_part_of("sgemm_otcopy", ""), CodePart::gemm_packing);
  EXPECT_EQ(code_part_of("sgemm_beta_HASWELL", "libopenblas.so.0"), CodePart::blas_other);
  EXPECT_EQ(code_part_of("sgemm_nn", "libopenblas.so.0"), CodePart::blas_other);
  EXPECT_EQ(code_part_of("blas_thread_server", "libopenblas.so.0"), CodePart::blas_other);
  EXPECT_EQ(code_part_of("sgemv_t_HASWELL", "libopenblas.so.0"), CodePart::blas_other);
}

TEST(CodePartsTest, NamesThatOnlyLookLikeBlasAreNotIt) {
  // A user's function that merely contains the words is other code, not OpenBLAS's.
  EXPECT_EQ(code_part_of("my_sgemm_kernel_wrapper", "app"), CodePart::other);
  EXPECT_EQ(code_part_of("sgemmkernel", "app"), CodePart::other);
}

TEST(CodePartsTest, EngineRuntimeAndSystem) {
  EXPECT_EQ(code_part_of("hwprof::nn::(anonymous namespace)::im2col(hwprof::nn::ConvGeometry const&, float const*, float*) [clone ._omp_fn.0]",
                         "libhwprof-engine.so"),
            CodePart::im2col);
  EXPECT_EQ(code_part_of("at::native::col2im_out_cpu", "libtorch_cpu.so"), CodePart::im2col);
  EXPECT_EQ(code_part_of("libgomp.so.1.0.0 [no symbol]", "libgomp.so.1.0.0"), CodePart::openmp);
  EXPECT_EQ(code_part_of("GOMP_parallel", "libgomp.so.1"), CodePart::openmp);
  EXPECT_EQ(code_part_of("__kmp_wait_template", "libiomp5.so"), CodePart::openmp);
  EXPECT_EQ(code_part_of("__memcpy_avx512_unaligned_erms", "libc.so.6"), CodePart::memory);
  EXPECT_EQ(code_part_of("__memset_avx2_unaligned", "libc.so.6"), CodePart::memory);
  EXPECT_EQ(code_part_of("expf", "libm.so.6"), CodePart::math_library);
  EXPECT_EQ(code_part_of("[kernel]", ""), CodePart::kernel);
  EXPECT_EQ(code_part_of("jit_uni_reorder_kernel", "perf-4242.map"), CodePart::jit);
  EXPECT_EQ(code_part_of("brgemm_kernel_t", "perf-4242.map"), CodePart::gemm_kernel);
  // oneDNN's direct convolution, as ONEDNN_JIT_PROFILE names it in the perf map.
  EXPECT_EQ(code_part_of("_jit_avx512_common_conv_fwd_kernel", "perf-4242.map"), CodePart::conv_kernel);
  EXPECT_EQ(code_part_of("my_conv_kernel", "app"), CodePart::other);
  EXPECT_EQ(code_part_of("[anonymous code: JIT without a perf map]", "[anon]"), CodePart::jit);
  EXPECT_EQ(code_part_of("hwprof::nn::relu_forward", "libhwprof.so"), CodePart::other);
  EXPECT_EQ(code_part_of("[unknown] 0x7f00", ""), CodePart::other);
}

TEST(CodePartsTest, EveryPartHasAName) {
  for (int p = 0; p <= static_cast<int>(CodePart::other); ++p) EXPECT_FALSE(code_part_name(static_cast<CodePart>(p)).empty());
  EXPECT_EQ(code_part_name(CodePart::gemm_packing), "GEMM packing");
}

}  // namespace
}  // namespace hwprof::profile
