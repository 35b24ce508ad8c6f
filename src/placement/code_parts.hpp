// What kind of code a sampled function is — the GEMM's micro-kernel, its packing of the
// operands, a convolution's im2col, OpenMP's runtime, a memory copy, the OS kernel — so that
// a layer's samples say how its time divides between the parts a performance engineer reasons
// about, not only between function names that differ per CPU (`sgemm_kernel_HASWELL`,
// `sgemm_kernel_SKYLAKEX`) (docs/sampling.md, "Parts of a layer").
#pragma once

#include <string_view>
#include "common/stages.hpp"

namespace hwprof::placement {

enum class CodePart {
  gemm_kernel,   // a BLAS GEMM's inner micro-kernel (OpenBLAS *gemm_kernel*, oneDNN/MKL gemm kernels)
  gemm_packing,  // copying the operands into the kernel's panel layout (OpenBLAS *gemm_itcopy/oncopy...)
  conv_kernel,   // a direct convolution's kernel (oneDNN's jit_*_conv_* kernels, in its module or a JIT perf map)
  blas_other,    // the rest of the BLAS library: drivers, C's scaling by beta, GEMV, its thread server
  im2col,        // a convolution's unfold (and col2im, its fold in backward)
  openmp,        // the OpenMP runtime: workers waiting at barriers, scheduling
  memory,        // memcpy, memmove, memset
  math_library,  // libm's functions (expf, tanhf ...)
  kernel,        // the OS kernel (system calls, page faults, interrupts)
  jit,           // code generated at run time (a perf map entry: oneDNN's JIT kernels)
  other,         // everything else: the engine's or the program's own loops, unknown code
};

// "GEMM kernel", "GEMM packing", ...: how the reports name a part.
std::string_view code_part_name(CodePart part) noexcept;

// The part a leaf frame belongs to, from its function's name as the symbolizer gave it
// (demangled; "libfoo.so [no symbol]" for stripped code, "[kernel]" for kernel frames) and the
// module it lies in ("libopenblas.so.0", "perf-123.map"; empty where unknown).
CodePart code_part_of(std::string_view function, std::string_view module) noexcept;

}  // namespace hwprof::placement
