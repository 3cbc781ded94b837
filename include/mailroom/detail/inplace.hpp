// SPDX-License-Identifier: MIT
// An object constructed in place inside its owner when the owner says so: how a selector holds
// its mailboxes. Not API.
#pragma once

#include <cstddef>
#include <new>
#include <utility>

namespace mailroom::detail {

/// A selector's mailbox, constructed in place inside the selector (emplace) once the runtime is
/// known to run: a send then finds the mailbox's send bounds and lane table at fixed offsets from
/// the selector, where a pointer to it would be one load more per message (the loop reloads it
/// after each message's bytes are stored, which may alias it).
template <class T>
class inplace {
 public:
  inplace() = default;
  inplace(const inplace&) = delete;
  inplace& operator=(const inplace&) = delete;
  ~inplace() { reset(); }
  template <class... A>
  T& emplace(A&&... args) {
    reset();
    ::new (static_cast<void*>(bytes_)) T(std::forward<A>(args)...);
    made_ = true;
    return **this;
  }
  void reset() noexcept {
    if (made_) (**this).~T();
    made_ = false;
  }
  T& operator*() noexcept { return *std::launder(reinterpret_cast<T*>(bytes_)); }
  const T& operator*() const noexcept { return *std::launder(reinterpret_cast<const T*>(bytes_)); }
  T* operator->() noexcept { return &**this; }
  const T* operator->() const noexcept { return &**this; }
  T* get() noexcept { return made_ ? &**this : nullptr; }

 private:
  alignas(T) std::byte bytes_[sizeof(T)];
  bool made_ = false;
};

}  // namespace mailroom::detail
