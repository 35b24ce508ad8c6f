// NumPy's .npy files (format 1.0, 2.0 and 3.0): `hwprof run --input x.npy -o y.npy`, so that a
// user can feed hwprof the tensor their framework saw and compare the outputs. The layout is
// NumPy's documented one (numpy.lib.format, NEP 1): the magic "\x93NUMPY", a major and a minor
// version byte, a little-endian header length (2 bytes in 1.0, 4 in 2.0 and 3.0), a header
// that is a Python dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...)}, padded
// with spaces to a multiple of 64 bytes and ended by '\n', then the data in C order.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/stages.hpp"
#include "hwprof/engine/tensor.hpp"
#include "hwprof/result.hpp"

namespace hwprof::nn {

struct NpyArray {
  enum class Type { float32, int32, int64 };  // NumPy's <f4, <i4, <i8
  Type type = Type::float32;
  std::vector<std::int64_t> shape;  // () for a scalar
  std::string data;                 // little-endian, C order, numel · element size bytes
};

// The header of an .npy file, read from its first bytes (`bytes` may stop anywhere after the
// header): the array's type and shape (its data left empty), where the data starts and how
// many bytes it has. For checking an array against memory before the file is read.
struct NpyHeader {
  NpyArray array;
  std::size_t data_offset = 0;
  std::int64_t data_bytes = 0;
};
Result<NpyHeader> parse_npy_header(std::string_view bytes, const std::string& path);
// That a file of `file_bytes` holds exactly the data its header describes ("truncated?",
// "trailing bytes").
std::optional<Error> check_npy_size(const NpyHeader& header, std::int64_t file_bytes, const std::string& path);
// The array in `bytes`; `path` names the file in messages. Accepts float32, int32 and int64

// in C order and little-endian; anything else is an error that says how to save it instead.
Result<NpyArray> parse_npy(std::string_view bytes, const std::string& path);
// The array as the engine's input tensor: float32 as it is; int64/int32 token ids as int32,
// each checked to be 0 to 2^31 - 1. The array must be [batch, ...] (rank 2 or more).
Result<Tensor> npy_to_tensor(const NpyArray& array, const std::string& path);
// The .npy file (format 1.0) of a float32 or int32 array.
std::string format_npy(std::string_view descr, const std::vector<std::int64_t>& shape, const void* data, std::size_t bytes);

}  // namespace hwprof::nn
