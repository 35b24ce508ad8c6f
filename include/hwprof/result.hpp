// Result<T>: a value or an Error with a message that says what, where and how to fix.
// Configuration and input problems come back this way; the library does not throw them.
#pragma once

#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include "hwprof/export.hpp"

HWPROF_API_BEGIN

namespace hwprof {

struct Error {
  std::string message;
};

// What value() throws on an error: its message, whole (an uncaught one prints it).
class BadResultAccess : public std::runtime_error {
 public:
  explicit BadResultAccess(const std::string& message) : std::runtime_error("hwprof: " + message) {}
};

template <class T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }

  // The value; on an error, throws BadResultAccess carrying the error's message (so that
  // `Session::open(...).value()` fails saying why, not with std::bad_variant_access).
  T& value() & {
    check();
    return std::get<0>(v_);
  }
  const T& value() const& {
    check();
    return std::get<0>(v_);
  }
  T&& value() && {
    check();
    return std::get<0>(std::move(v_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  // Precondition: !ok().
  const Error& error() const { return std::get<1>(v_); }

 private:
  void check() const {
    if (v_.index() != 0) throw BadResultAccess(std::get<1>(v_).message);
  }
  std::variant<T, Error> v_;
};

}  // namespace hwprof
HWPROF_API_END
