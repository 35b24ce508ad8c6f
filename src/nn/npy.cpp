#include "nn/npy.hpp"

#include <cctype>
#include <cstring>
#include <limits>

#include "common/stages.hpp"
#include "hwprof/engine/graph.hpp"

namespace hwprof::nn {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicSize = 6;
// A header longer than this is not one NumPy writes for any array hwprof can take.
constexpr std::size_t kMaxHeader = 1 << 16;
constexpr std::int64_t kMaxElements = std::int64_t{1} << 40;

// A cursor over the header's dict literal: only what numpy.lib.format writes (strings in
// single or double quotes, True/False, tuples of non-negative integers).
class HeaderReader {
 public:
  HeaderReader(std::string_view text, const std::string& path) : s_(text), path_(path) {}

  Result<NpyArray> read() {
    NpyArray array;
    bool have_descr = false, have_order = false, have_shape = false;
    skip();
    if (!eat('{')) return bad("the header is not a dict ('{' expected)");
    for (;;) {
      skip();
      if (eat('}')) break;
      std::string key;
      if (!string(&key)) return bad("a key in quotes expected at offset " + std::to_string(pos_));
      skip();
      if (!eat(':')) return bad("':' expected after '" + key + "'");
      skip();
      if (key == "descr") {
        std::string descr;
        if (!string(&descr)) return bad("'descr' is not a string (a structured dtype?)");
        if (descr == "<f4") {
          array.type = NpyArray::Type::float32;
        } else if (descr == "<i4") {
          array.type = NpyArray::Type::int32;
        } else if (descr == "<i8") {
          array.type = NpyArray::Type::int64;
        } else {
          return bad("the array's dtype is '" + descr +
                     "'; hwprof reads float32 ('<f4') inputs and int64/int32 token ids (save it with np.save(path, x.astype(np.float32)))");
        }
        have_descr = true;
      } else if (key == "fortran_order") {
        if (s_.substr(pos_, 5) == "False") {
          pos_ += 5;
        } else if (s_.substr(pos_, 4) == "True") {
          return bad("the array is in Fortran order; save np.ascontiguousarray(x) instead");
        } else {
          return bad("'fortran_order' is neither True nor False");
        }
        have_order = true;
      } else if (key == "shape") {
        if (!eat('(')) return bad("'shape' is not a tuple");
        std::int64_t elements = 1;
        for (;;) {
          skip();
          if (eat(')')) break;
          std::int64_t d = 0;
          std::size_t digits = 0;
          while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_])) != 0) {
            if (d > kMaxElements) return bad("a dimension of 'shape' is too large");
            d = d * 10 + (s_[pos_++] - '0');
            ++digits;
          }
          if (digits == 0) return bad("'shape' holds something other than non-negative integers");
          if (array.shape.size() >= 32) return bad("'shape' has more than 32 dimensions");
          if (d > 0 && elements > kMaxElements / d) return bad("the shape's element count overflows");
          elements *= d;
          array.shape.push_back(d);
          skip();
          if (eat(')')) break;
          if (!eat(',')) return bad("',' or ')' expected in 'shape'");
        }
        have_shape = true;
      } else {
        return bad("unknown key '" + key + "' in the header");
      }
      skip();
      if (eat('}')) break;
      if (!eat(',')) return bad("',' or '}' expected after the value of '" + key + "'");
    }
    if (!have_descr || !have_order || !have_shape) return bad("the header lacks 'descr', 'fortran_order' or 'shape'");
    return array;
  }

 private:
  Error bad(const std::string& what) const { return Error{path_ + ": not a .npy file hwprof can read: " + what}; }
  void skip() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t')) ++pos_;
  }
  bool eat(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool string(std::string* out) {
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"')) return false;
    const char quote = s_[pos_++];
    const std::size_t end = s_.find(quote, pos_);
    if (end == std::string_view::npos) return false;
    *out = std::string(s_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return true;
  }

  std::string_view s_;
  const std::string& path_;
  std::size_t pos_ = 0;
};

std::size_t element_size(NpyArray::Type t) {
  return t == NpyArray::Type::int64 ? 8 : 4;
}

}  // namespace

Result<NpyHeader> parse_npy_header(std::string_view bytes, const std::string& path) {
  if (bytes.size() < kMagicSize + 4 || std::memcmp(bytes.data(), kMagic, kMagicSize) != 0) {
    return Error{path + ": not a .npy file (it does not start with NumPy's magic \"\\x93NUMPY\"; save the array with numpy.save)"};
  }
  const auto major = static_cast<unsigned char>(bytes[6]);
  std::size_t header_len = 0, header_start = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<std::size_t>(static_cast<unsigned char>(bytes[9])) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return Error{path + ": the .npy file is truncated inside its preamble"};
    for (int i = 3; i >= 0; --i) header_len = (header_len << 8) | static_cast<unsigned char>(bytes[8 + static_cast<std::size_t>(i)]);
    header_start = 12;
  } else {
    return Error{path + ": .npy format version " + std::to_string(major) + " is unknown (NumPy writes 1.0 to 3.0)"};
  }
  if (header_len > kMaxHeader) return Error{path + ": the .npy header claims " + std::to_string(header_len) + " bytes; refused"};
  if (bytes.size() < header_start + header_len) return Error{path + ": the .npy file is truncated inside its header"};
  std::string_view header = bytes.substr(header_start, header_len);
  while (!header.empty() && (header.back() == '\n' || header.back() == ' ')) header.remove_suffix(1);
  auto array = HeaderReader(header, path).read();
  if (!array) return array.error();
  std::int64_t n = 1;
  for (std::int64_t d : array->shape) n *= d;  // bounded by the reader
  const std::int64_t data_bytes = n * static_cast<std::int64_t>(element_size(array->type));
  return NpyHeader{std::move(*array), header_start + header_len, data_bytes};
}

std::optional<Error> check_npy_size(const NpyHeader& header, std::int64_t file_bytes, const std::string& path) {
  const std::int64_t want = header.data_bytes;
  const std::int64_t have = file_bytes - static_cast<std::int64_t>(header.data_offset);
  if (have == want) return std::nullopt;
  return Error{path + ": the .npy data is " + std::to_string(have) + " bytes; its shape and dtype need " + std::to_string(want) +
               (have < want ? " (truncated?)" : " (trailing bytes)")};
}

Result<NpyArray> parse_npy(std::string_view bytes, const std::string& path) {
  auto header = parse_npy_header(bytes, path);
  if (!header) return header.error();
  if (auto error = check_npy_size(*header, static_cast<std::int64_t>(bytes.size()), path)) return *error;
  NpyArray array = std::move(header->array);
  array.data = std::string(bytes.substr(header->data_offset));
  return array;
}

Result<Tensor> npy_to_tensor(const NpyArray& a, const std::string& path) {
  if (a.shape.size() < 2) {
    return Error{path + ": the array has shape " + format_shape(a.shape) +
                 "; hwprof needs [batch, ...] (rank 2 or more; add a batch axis with x[None])"};
  }
  if (a.shape[0] < 1) return Error{path + ": the batch (first axis) is 0"};
  if (a.type == NpyArray::Type::float32) {
    Tensor t = Tensor::empty(a.shape, DType::f32);
    std::memcpy(t.f32(), a.data.data(), a.data.size());
    return t;
  }
  Tensor t = Tensor::empty(a.shape, DType::i32);
  const std::int64_t n = t.numel();
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t v = 0;
    if (a.type == NpyArray::Type::int64) {
      std::memcpy(&v, a.data.data() + i * 8, 8);
    } else {
      std::int32_t w = 0;
      std::memcpy(&w, a.data.data() + i * 4, 4);
      v = w;
    }
    if (v < 0 || v > std::numeric_limits<std::int32_t>::max()) {
      return Error{path + ": element " + std::to_string(i) + " is " + std::to_string(v) + ", not a token id (0 to 2^31 - 1)"};
    }
    t.i32()[i] = static_cast<std::int32_t>(v);
  }
  return t;
}

std::string format_npy(std::string_view descr, const std::vector<std::int64_t>& shape, const void* data, std::size_t bytes) {
  std::string dims;
  for (std::int64_t d : shape) dims += std::to_string(d) + ", ";
  if (shape.size() == 1) dims.pop_back();  // (n,) keeps its comma, as NumPy writes it
  if (shape.size() > 1) dims.resize(dims.size() - 2);
  std::string header = "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': (" + dims + "), }";
  // Padded with spaces so that the data starts at a multiple of 64 bytes, then '\n'.
  const std::size_t used = kMagicSize + 4 + header.size() + 1;
  header.append((64 - used % 64) % 64, ' ');
  header += '\n';
  std::string out(kMagic, kMagicSize);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  out += header;
  out.append(static_cast<const char*>(data), bytes);
  return out;
}

}  // namespace hwprof::nn
