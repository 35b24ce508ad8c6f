#include "placement/code_parts.hpp"

#include <array>
#include "common/stages.hpp"

namespace hwprof::placement {
namespace {

bool has(std::string_view text, std::string_view part) noexcept {
  return text.find(part) != std::string_view::npos;
}

bool starts(std::string_view text, std::string_view prefix) noexcept {
  return text.substr(0, prefix.size()) == prefix;
}

// OpenBLAS names its level-3 routines after the data type ([sdcz], with q/x/b/sh variants)
// and the role the build's kernel/<arch>/KERNEL.<CORE> file gives them: GEMMKERNEL is the
// micro-kernel ("sgemm_kernel_HASWELL"), GEMMINCOPY/ITCOPY/ONCOPY/OTCOPY the copies that pack A
// and B into panels ("sgemm_itcopy_HASWELL": i/o for the inner or outer operand, n/t for
// not transposed or transposed), GEMM_BETA the scaling of C. (OpenBLAS's kernel/Makefile.L3
// and kernel/x86_64/KERNEL.HASWELL name them.)
constexpr std::array<std::string_view, 8> kGemmTypes = {"sgemm", "dgemm", "cgemm", "zgemm", "sbgemm", "shgemm", "qgemm", "xgemm"};

bool is_openblas_gemm(std::string_view function, std::string_view role) noexcept {
  for (std::string_view type : kGemmTypes) {
    if (!starts(function, type)) continue;
    const std::string_view rest = function.substr(type.size());
    if (starts(rest, "_") && has(rest.substr(0, role.size() + 1), role)) return true;
    // The small-matrix kernels ("sgemm_small_kernel_nn_SKYLAKEX") are kernels too.
    if (role == "kernel" && starts(rest, "_small_kernel")) return true;
  }
  return false;
}

bool is_packing(std::string_view function) noexcept {
  for (std::string_view copy : {"itcopy", "incopy", "otcopy", "oncopy"})
    if (is_openblas_gemm(function, copy)) return true;
  return false;
}

bool is_blas_module(std::string_view module) noexcept {
  return has(module, "openblas") || has(module, "libblas") || has(module, "mkl_") || has(module, "libblis");
}

}  // namespace

std::string_view code_part_name(CodePart part) noexcept {
  switch (part) {
    case CodePart::gemm_kernel:
      return "GEMM kernel";
    case CodePart::gemm_packing:
      return "GEMM packing";
    case CodePart::conv_kernel:
      return "conv kernel";
    case CodePart::blas_other:
      return "BLAS other";
    case CodePart::im2col:
      return "im2col";
    case CodePart::openmp:
      return "OpenMP runtime";
    case CodePart::memory:
      return "memory copy/fill";
    case CodePart::math_library:
      return "libm";
    case CodePart::kernel:
      return "OS kernel";
    case CodePart::jit:
      return "JIT code";
    case CodePart::other:
      return "other code";
  }
  return "other code";
}

CodePart code_part_of(std::string_view function, std::string_view module) noexcept {
  if (function == "[kernel]") return CodePart::kernel;
  if (is_openblas_gemm(function, "kernel")) return CodePart::gemm_kernel;
  if (is_packing(function)) return CodePart::gemm_packing;
  // oneDNN's and MKL's GEMM kernels, as their symbols or JIT perf map entries name them (only
  // in their modules: a user's "my_gemm_kernel" is the user's code).
  const bool onednn_module = has(module, "dnnl") || has(module, "mkl") || has(module, "libtorch") || (starts(module, "perf-") && has(module, ".map"));
  if (onednn_module && (has(function, "brgemm") || has(function, "gemm_kernel") || has(function, "_gemm_") || has(function, "gemm_driver")))
    return CodePart::gemm_kernel;
  if (onednn_module && has(function, "conv") && (has(function, "kernel") || has(function, "_fwd") || has(function, "_bwd")))
    return CodePart::conv_kernel;
  if (is_blas_module(module) || is_openblas_gemm(function, "beta")) return CodePart::blas_other;
  if (has(function, "im2col") || has(function, "col2im") || has(function, "vol2col") || has(function, "Im2Col")) return CodePart::im2col;
  if (has(module, "libgomp") || has(module, "libiomp") || has(module, "libomp") || starts(function, "GOMP_") || starts(function, "gomp_") ||
      starts(function, "__kmp"))
    return CodePart::openmp;
  for (std::string_view mem : {"memcpy", "memmove", "memset", "__memcpy", "__memmove", "__memset"})
    if (starts(function, mem)) return CodePart::memory;
  if (starts(module, "libm.so") || starts(module, "libm-") || starts(module, "libmvec")) return CodePart::math_library;
  // A perf map's other entries, and anonymous executable memory no map names (the sampling
  // step's "[anonymous code: ...]" frame).
  if ((starts(module, "perf-") && has(module, ".map")) || starts(function, "[anonymous code")) return CodePart::jit;
  return CodePart::other;
}

}  // namespace hwprof::placement
