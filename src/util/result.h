// Result<T>: the must-check return type for environment failures (a missing tool, a file
// that cannot be read, a subprocess that timed out). Source problems in PTX are not errors
// of this kind: they are collected as Diagnostics. Bugs are asserts.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace ptxforge {

struct Error {
  std::string message;  // lowercase, says what failed and, where it can, what to do
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}
  Result(Error error) : v_(std::move(error)) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { assert(ok()); return std::get<0>(v_); }
  const T& value() const& { assert(ok()); return std::get<0>(v_); }
  T&& value() && { assert(ok()); return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const { assert(!ok()); return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

struct Unit {};
using Status = Result<Unit>;
inline Status ok_status() { return Unit{}; }

}  // namespace ptxforge
