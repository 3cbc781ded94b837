// SPDX-License-Identifier: MIT
// A move-only void() callable with room for small captures inside it: what a future keeps of a
// continuation. std::function allocates for any capture over 16 bytes (libstdc++), which a
// continuation passes at once (the promise it fulfils is 16), so a million non-blocking
// operations a second paid an allocation each; std::move_only_function is C++23.
#pragma once

#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

namespace mailroom::detail {

class callback {
 public:
  /// Captures up to this size live inside the callback; larger ones on the heap.
  static constexpr std::size_t k_inline = 48;

  callback() noexcept = default;
  template <class F>
    requires(!std::is_same_v<std::decay_t<F>, callback> && std::is_invocable_v<std::decay_t<F>&>)
  // NOLINTNEXTLINE(bugprone-forwarding-reference-overload): the requires-clause excludes callback
  callback(F&& f) {  // NOLINT(google-explicit-constructor): as std::function's
    using D = std::decay_t<F>;
    if constexpr (fits<D>) {
      ::new (static_cast<void*>(buf_)) D(std::forward<F>(f));
      ops_ = &inline_ops<D>;
    } else {
      *reinterpret_cast<D**>(buf_) = new D(std::forward<F>(f));
      ops_ = &heap_ops<D>;
    }
  }
  callback(callback&& o) noexcept { take(o); }
  callback& operator=(callback&& o) noexcept {
    if (this != &o) {
      reset();
      take(o);
    }
    return *this;
  }
  callback(const callback&) = delete;
  callback& operator=(const callback&) = delete;
  ~callback() { reset(); }

  explicit operator bool() const noexcept { return ops_ != nullptr; }
  void operator()() { ops_->call(buf_); }
  void reset() noexcept {
    if (ops_ != nullptr) {
      ops_->destroy(buf_);
      ops_ = nullptr;
    }
  }

 private:
  struct ops_table {
    void (*call)(void*);
    void (*move)(void* from, void* to) noexcept;  // and destroys `from`
    void (*destroy)(void*) noexcept;
  };
  template <class D>
  static constexpr bool fits = sizeof(D) <= k_inline && alignof(D) <= alignof(std::max_align_t) &&
                               std::is_nothrow_move_constructible_v<D>;
  template <class D>
  static constexpr ops_table inline_ops{[](void* p) { (*static_cast<D*>(p))(); },
                                        [](void* from, void* to) noexcept {
                                          ::new (to) D(std::move(*static_cast<D*>(from)));
                                          static_cast<D*>(from)->~D();
                                        },
                                        [](void* p) noexcept { static_cast<D*>(p)->~D(); }};
  template <class D>
  static constexpr ops_table heap_ops{
      [](void* p) { (**static_cast<D**>(p))(); },
      [](void* from, void* to) noexcept { *static_cast<D**>(to) = *static_cast<D**>(from); },
      [](void* p) noexcept { delete *static_cast<D**>(p); }};

  void take(callback& o) noexcept {
    ops_ = o.ops_;
    if (ops_ != nullptr) {
      ops_->move(o.buf_, buf_);
      o.ops_ = nullptr;
    }
  }

  alignas(std::max_align_t) unsigned char buf_[k_inline];
  const ops_table* ops_ = nullptr;
};

}  // namespace mailroom::detail
