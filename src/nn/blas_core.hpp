// Which OpenBLAS kernels an AVX-512 CPU should not be left with. Internal to src/nn.
#pragma once

#include <string_view>
#include "common/stages.hpp"

namespace hwprof::nn::detail {

// True for an OpenBLAS core name (openblas_get_corename) whose kernels use no AVX-512: on a
// CPU with AVX-512 F, CD, BW, DQ and VL they hold OpenBLAS back (BlasInfo::avx512_unused).
bool openblas_core_without_avx512(std::string_view core) noexcept;

}  // namespace hwprof::nn::detail
