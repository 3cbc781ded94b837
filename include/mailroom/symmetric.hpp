// Symmetric memory: arrays allocated collectively at the same virtual address on every PE, so a
// pointer into one means the same element on any PE (and lambda messages may capture it).
#pragma once

#include "mailroom/error.hpp"

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace mailroom {

namespace detail {
/// Collective: the next `bytes` of the symmetric heap (same address on every PE), zeroed.
void* symmetric_allocate(std::size_t bytes, std::size_t align);
/// Collective: returns the block; blocks are reclaimed in reverse order of allocation.
void symmetric_deallocate(void* p) noexcept;
void symmetric_start(std::size_t reserve_bytes);
void symmetric_stop() noexcept;

/// Collective: a mark of the allocations made so far; symmetric_release(mark) frees every block
/// allocated after it.
std::uint64_t symmetric_mark() noexcept;
void symmetric_release(std::uint64_t mark) noexcept;

/// Elements in the symmetric block at p (stored just before it, so a handle is one pointer).
std::size_t symmetric_count(const void* p) noexcept;
}  // namespace detail

/// A handle to n elements of T per PE, at the same address on every PE. Trivially copyable and
/// one pointer wide, so lambda messages may capture it by value (cheaply) and index it on the
/// PE they run on. Construction is collective (every PE, same order, same n); release it with
/// symmetric_free (collective), a symmetric_scope, or leave it to the runtime's end.
template <class T>
class symmetric_array {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>,
                "symmetric_array<T>: T must be trivially copyable and destructible");

 public:
  symmetric_array() = default;
  explicit symmetric_array(std::size_t n)
      : data_(static_cast<T*>(detail::symmetric_allocate(n * sizeof(T), alignof(T)))) {}

  [[nodiscard]] T& operator[](std::size_t i) const noexcept { return data_[i]; }
  [[nodiscard]] T* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t size() const noexcept {
    return data_ == nullptr ? 0 : detail::symmetric_count(data_) / sizeof(T);
  }
  [[nodiscard]] T* begin() const noexcept { return data_; }
  [[nodiscard]] T* end() const noexcept { return data_ + size(); }

 private:
  T* data_ = nullptr;
};

/// One T per PE at the same address on every PE: per-PE state that lambda messages reach. Each
/// PE constructs it (collectively) with its own value, e.g. the addresses of its arrays; a
/// closure captures the handle (one pointer, like a symmetric_array) and reads, through `->`,
/// the value of the PE it runs on. Released like a symmetric_array (a symmetric_scope).
template <class T>
class symmetric {
 public:
  explicit symmetric(const T& value) : a_(1) { a_[0] = value; }
  [[nodiscard]] T& operator*() const noexcept { return a_[0]; }
  [[nodiscard]] T* operator->() const noexcept { return a_.data(); }

 private:
  symmetric_array<T> a_;
};

/// Collective: gives the array's memory back to the symmetric heap.
template <class T>
void symmetric_free(symmetric_array<T>& a) noexcept {
  detail::symmetric_deallocate(a.data());
  a = symmetric_array<T>();
}

/// Frees, when it goes out of scope, every symmetric array allocated on this PE since it was
/// constructed (whose handles are then dangling), so that a kernel needs no symmetric_free per
/// array. Like the allocations it frees, it is collective: every PE opens and closes its scopes
/// in the same order. Freeing is local bookkeeping (no communication), so a scope closed by an
/// exception cannot hang the job.
class symmetric_scope {
 public:
  symmetric_scope() noexcept : mark_(detail::symmetric_mark()) {}
  ~symmetric_scope() { detail::symmetric_release(mark_); }
  symmetric_scope(const symmetric_scope&) = delete;
  symmetric_scope& operator=(const symmetric_scope&) = delete;

 private:
  std::uint64_t mark_;
};

}  // namespace mailroom
