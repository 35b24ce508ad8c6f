// The analytic cost of one aten op call, from its name and the shapes and scalars of its
// inputs, through the op table and cost functions of src/cost (one node, one op_cost call):
// no formula lives here. Needs no libtorch: the observer (observer.cpp) copies a call's
// inputs into an AtenCall, a plain fixed-size record, and tests build one by hand.
// Which aten ops map onto which op, and which level of a composite op carries its FLOPs:
// docs/torch.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "common/stages.hpp"
#include "hwprof/compute_roof.hpp"

namespace hwprof::pytorch {

inline constexpr std::size_t kAtenMaxRank = 8;
inline constexpr std::size_t kAtenMaxReals = 3;  // a float list's values kept (upsampling's scale factors)
inline constexpr std::size_t kAtenMaxArgs = 16;

enum class AtenArgKind : std::uint8_t {
  other,    // anything not below (a string, a generator, a tensor of rank > kAtenMaxRank)
  none,     // an optional left out, or an undefined tensor
  tensor,   // `dims[0..rank)`, `element`, `element_bytes`
  reals,    // a float list: `reals[0..rank)` (its first kAtenMaxReals values)
  tensors,  // a tensor list: `count` tensors, `elements` over all, the first one's `dims`
  ints,     // an int or bool list: `rank` values in `dims` (the first kAtenMaxRank)
  integer,  // `integer`
  real,     // `real`
  boolean,  // `integer` 0 or 1
  text,     // a string: `integer` 1 when it reads "tanh" (gelu's approximate), else 0
};

enum class AtenElement : std::uint8_t { floating, integer, other };

struct AtenArg {
  AtenArgKind kind = AtenArgKind::other;
  AtenElement element = AtenElement::other;
  std::uint8_t element_bytes = 0;
  std::uint8_t rank = 0;
  std::int64_t dims[kAtenMaxRank] = {};
  std::int64_t elements = 0;  // tensor, tensors: element count
  std::int64_t count = 0;     // tensors: list length
  std::int64_t integer = 0;
  double real = 0.0;
  double reals[kAtenMaxReals] = {};  // reals: the list's first values, `rank` of them
  bool requires_grad = false;        // tensor: autograd will want its gradient (per call; not in the signature)
};

// One call: the op's name as aten gives it ("aten::conv2d") and its first kAtenMaxArgs inputs.
struct AtenCall {
  std::string_view op;
  std::size_t arg_count = 0;
  AtenArg args[kAtenMaxArgs];
};

// Floating-point operations and minimum bytes of one call (the whole call, every sample).
struct AtenCost {
  double flops = 0.0;
  double bytes = 0.0;
  // A forward op's backward by the op table (the same node): its FLOPs with and without the
  // input's and the parameters' gradients, and its minimum bytes. Absent for a backward op's
  // own cost, and for an op whose node has no backward.
  struct Backward {
    double base_flops = 0.0;    // whenever it back-propagates
    double weight_flops = 0.0;  // its parameters' gradients
    double input_flops = 0.0;   // its input's gradient
    double bytes = 0.0;
  };
  std::optional<Backward> backward;
  // What bounds PyTorch's arithmetic for it: the GEMM ceiling for a matrix product (the BLAS the
  // calibration measured), else the FMA peak (aten_cost.cpp says why not a function's rate or,
  // for a convolution, the GEMM ceiling).
  ComputeRoof roof;
};

// The call's cost, or nullopt where hwprof has no formula for the op or for these inputs
// (its row then says "not counted": never 0 FLOPs). Allocates (a one-node Graph): call it
// once per distinct signature, not per call.
std::optional<AtenCost> aten_cost(const AtenCall& call);

// The op's work runs on the BLAS GEMM the calibration measured: a matrix product (mm, addmm,
// bmm, linear, ...): its compute roof is the measured GEMM ceiling (aten_cost's roof says so).
// A convolution is not: PyTorch runs it on oneDNN or its own loops (aten_cost.cpp says why).
bool aten_gemm_backed(const AtenCall& call) noexcept;

// One GEMM's M·N·K where PyTorch's CPU kernel for the op hands its product to the BLAS
// (at::native::cpublas::gemm; a batched product, each of its GEMMs), else 0: mm(a[M,K], b[K,N]),
// addmm(c, a, b), bmm(a[B,M,K], b[B,K,N]), baddbmm(c, a, b), addbmm(c, a, b).
std::int64_t blas_gemm_mnk(const AtenCall& call) noexcept;

// The threads OpenBLAS runs a GEMM of M·N·K on with a pool of `pool`: one up to 65536 × 4 (its
// SMP_THRESHOLD_MIN × GEMM_MULTITHREAD_THRESHOLD, interface/gemm.c), else M·N·K over that, at
// most the pool.
int openblas_gemm_threads(std::int64_t mnk, int pool) noexcept;

// A hash of the op's name and every input's kind, shape and scalar: calls with one signature
// have one cost. Allocation-free, for the observer's per-call lookup.
std::uint64_t aten_signature(const AtenCall& call) noexcept;
// The same with the op's name taken by its address (the observer's names are its operators',
// which live as long as the process): cheaper, for a key that need not be equal across names
// of equal text (one thread's table of signatures).
std::uint64_t aten_call_key(const AtenCall& call) noexcept;

}  // namespace hwprof::pytorch
