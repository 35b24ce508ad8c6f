// Count: a 64-bit integer that remembers overflow instead of wrapping, so that the cost model
// can compute every formula straight and ask once, at the end, whether the result is real.
#pragma once

#include <cstdint>

namespace hwprof::common {

class Count {
 public:
  constexpr Count(std::int64_t value = 0) noexcept : value_(value) {}  // NOLINT(google-explicit-constructor)

  constexpr std::int64_t value() const noexcept { return value_; }
  constexpr bool overflowed() const noexcept { return overflowed_; }

  friend constexpr Count operator+(Count a, Count b) noexcept {
    Count r;
    r.overflowed_ = a.overflowed_ || b.overflowed_ || __builtin_add_overflow(a.value_, b.value_, &r.value_);
    return r;
  }
  friend constexpr Count operator-(Count a, Count b) noexcept {
    Count r;
    r.overflowed_ = a.overflowed_ || b.overflowed_ || __builtin_sub_overflow(a.value_, b.value_, &r.value_);
    return r;
  }
  friend constexpr Count operator*(Count a, Count b) noexcept {
    Count r;
    r.overflowed_ = a.overflowed_ || b.overflowed_ || __builtin_mul_overflow(a.value_, b.value_, &r.value_);
    return r;
  }
  constexpr Count& operator+=(Count o) noexcept { return *this = *this + o; }

 private:
  std::int64_t value_ = 0;
  bool overflowed_ = false;
};

}  // namespace hwprof::common
