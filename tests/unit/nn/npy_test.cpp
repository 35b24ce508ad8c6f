// NumPy .npy files (src/nn/npy.cpp): what numpy.save writes is read back exactly, what
// hwprof writes NumPy's layout rules accept (data at a multiple of 64 bytes), and damaged or
// unsupported files are clear errors that say what to do.
#include <cstring>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/stages.hpp"
#include "nn/npy.hpp"

namespace hwprof::nn {
namespace {

using ::testing::HasSubstr;

std::string npy_v1(const std::string& header_dict, const std::string& data) {
  std::string header = header_dict;
  const std::size_t used = 10 + header.size() + 1;
  header.append((64 - used % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  return out + header + data;
}

TEST(Npy, WhatHwprofWritesReadsBackExactly) {
  const std::vector<float> v = {1.5f, -2.0f, 3.25f, 0.0f, 1e-30f, 7.0f};
  const std::string bytes = format_npy("<f4", {2, 3}, v.data(), v.size() * 4);
  EXPECT_EQ((bytes.find('\n') + 1) % 64, 0u);  // the data starts at a multiple of 64 bytes
  auto a = parse_npy(bytes, "y.npy");
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->type, NpyArray::Type::float32);
  EXPECT_EQ(a->shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(std::memcmp(a->data.data(), v.data(), 24), 0);
  const std::string one = format_npy("<f4", {1}, v.data(), 4);
  EXPECT_THAT(one, HasSubstr("'shape': (1,), }"));  // NumPy's tuple of one
}

TEST(Npy, NumpysOwnHeadersAreRead) {
  std::string ids(2 * 3 * 8, '\0');
  ids[0] = 7;
  auto a = parse_npy(npy_v1("{'descr': '<i8', 'fortran_order': False, 'shape': (2, 3), }", ids), "ids.npy");
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->type, NpyArray::Type::int64);
  EXPECT_EQ(a->shape, (std::vector<std::int64_t>{2, 3}));
  auto s = parse_npy(npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", std::string(4, '\0')), "s.npy");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_TRUE(s->shape.empty());
}

TEST(Npy, DamagedOrUnsupportedFilesAreClearErrors) {
  struct Case {
    std::string bytes;
    const char* says;
  };
  const std::string f4 = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  const std::vector<Case> cases = {
      {"", "NumPy's magic"},
      {"{\"layers\": []}", "NumPy's magic"},
      {std::string("\x93NUMPY\x09\x00\x10\x00", 10), "version 9"},
      {std::string("\x93NUMPY\x01\x00\xff\xff", 10), "truncated inside its header"},
      {npy_v1(f4, std::string(4, '\0')), "truncated?"},
      {npy_v1(f4, std::string(12, '\0')), "trailing bytes"},
      {npy_v1("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", std::string(16, '\0')), "astype(np.float32)"},
      {npy_v1("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", std::string(8, '\0')), "'>f4'"},
      {npy_v1("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", std::string(8, '\0')), "ascontiguousarray"},
      {npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999999), }", ""), "overflows"},
      {npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", ""), "non-negative integers"},
      {npy_v1("{'descr': '<f4', 'shape': (2,), }", std::string(8, '\0')), "lacks"},
      {npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'evil': 1}", std::string(8, '\0')), "unknown key 'evil'"},
      {npy_v1("[1, 2]", ""), "not a dict"},
  };
  for (const Case& c : cases) {
    auto a = parse_npy(c.bytes, "x.npy");
    ASSERT_FALSE(a.ok()) << c.says;
    EXPECT_THAT(a.error().message, HasSubstr("x.npy")) << c.says;
    EXPECT_THAT(a.error().message, HasSubstr(c.says));
  }
}

}  // namespace
}  // namespace hwprof::nn
