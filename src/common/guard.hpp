// SPDX-License-Identifier: MIT
// Scope guards: a variable set for a scope and given back its value however the scope ends.
// Not installed.
#pragma once

namespace mailroom::detail {

/// Sets `var` to `value` for the enclosing scope and gives it back its old value at the end.
template <class T>
class scoped_assign {
 public:
  scoped_assign(T& var, T value) noexcept : var_(var), outer_(var) { var_ = value; }
  ~scoped_assign() { var_ = outer_; }
  scoped_assign(const scoped_assign&) = delete;
  scoped_assign& operator=(const scoped_assign&) = delete;

 private:
  T& var_;
  const T outer_;
};

}  // namespace mailroom::detail
