// SPDX-License-Identifier: MIT
// Symmetric memory: arrays allocated collectively at the same virtual address on every PE, so a
// pointer into one means the same element on any PE (and lambda messages may capture it).
#pragma once

#include "mailroom/detail/reduction.hpp"
#include "mailroom/error.hpp"
#include "mailroom/future.hpp"
#include "mailroom/pe.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <type_traits>

namespace mailroom {

namespace detail {
/// Collective: the next `bytes` of the symmetric heap (same address on every PE), zeroed. The
/// first reserves the heap (MAILROOM_SYMMETRIC_HEAP_BYTES), which the runtime's end unmaps.
void* symmetric_allocate(std::size_t bytes, std::size_t align);
/// Collective: returns the block; blocks are reclaimed in reverse order of allocation.
void symmetric_deallocate(void* p) noexcept;

/// Collective: a mark of the allocations made so far; symmetric_release(mark) frees every block
/// allocated after it.
std::uint64_t symmetric_mark() noexcept;
void symmetric_release(std::uint64_t mark) noexcept;

/// Elements in the symmetric block at p (stored just before it, so a handle is one pointer).
std::size_t symmetric_count(const void* p) noexcept;

/// p's counterpart in PE pe's heap where this process maps it (this PE's, or one of its node
/// whose heap it shares), else null: pe is then reached through the transport (below).
void* symmetric_peer(int pe, const void* p) noexcept;
/// The same for atomics: null for every PE when some PE is reached through MPI, whose atomics
/// (applied by the target's MPI library) are atomic only with respect to each other.
void* symmetric_atomic_peer(int pe, const void* p) noexcept;
void symmetric_get(int pe, const void* p, void* out, std::size_t bytes);
void symmetric_put(int pe, void* p, const void* in, std::size_t bytes);
std::uint64_t symmetric_atomic(int pe, void* p, elem_type type, atomic_op op, std::uint64_t operand,
                               std::uint64_t compare);
future<void> symmetric_get_async(int pe, const void* p, void* out, std::size_t bytes);
future<void> symmetric_put_async(int pe, void* p, const void* in, std::size_t bytes);
future<std::uint64_t> symmetric_atomic_async(int pe, void* p, elem_type type, atomic_op op,
                                             std::uint64_t operand, std::uint64_t compare);
/// Completes every put this PE started (see mailroom::quiet).
void quiet();
/// The PE count, for the checks (runtime.cpp).
int one_sided_pes() noexcept;
/// Stops the job: PE or index out of range for a one-sided operation.
[[noreturn]] void one_sided_out_of_range(const char* op, int pe, std::size_t i, std::size_t n,
                                         std::size_t size);

template <class T>
constexpr bool atomic_capable =
    std::is_integral_v<T> && !std::is_same_v<T, bool> &&
    (sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8);

template <class T>
T from_bits(std::uint64_t bits) noexcept {
  T v;
  std::memcpy(&v, &bits, sizeof(T));  // (little-endian: the low bytes)
  return v;
}
template <class T>
std::uint64_t to_bits(T v) noexcept {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  return bits;
}

// The operation on an element this process maps (hardware atomics).
template <class T>
T atomic_here(T* p, atomic_op op, T operand, T compare) noexcept {
  std::atomic_ref<T> a(*p);
  switch (op) {
    case atomic_op::add:
      return a.fetch_add(operand);
    case atomic_op::band:
      return a.fetch_and(operand);
    case atomic_op::bor:
      return a.fetch_or(operand);
    case atomic_op::bxor:
      return a.fetch_xor(operand);
    case atomic_op::swap:
      return a.exchange(operand);
    case atomic_op::load:
      return a.load();
    case atomic_op::compare_swap:
      a.compare_exchange_strong(compare, operand);
      return compare;
  }
  return T{};
}
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
  /// Collective: n elements per PE from the symmetric heap, zeroed. The runtime must exist;
  /// a heap too small (MAILROOM_SYMMETRIC_HEAP_BYTES) or n differing between PEs stops the job.
  explicit symmetric_array(std::size_t n, source_location loc = source_location::current())
      : data_(static_cast<T*>(allocate(n, loc))) {}

 private:
  // (A misuse of the allocation names the caller's line.)
  static void* allocate(std::size_t n, const source_location& loc) {
    const detail::call_site here(loc);
    return detail::symmetric_allocate(n * sizeof(T), alignof(T));
  }

 public:
  /// Element i of this PE's array (where a closure runs: that PE's). Not checked.
  [[nodiscard]] T& operator[](std::size_t i) const noexcept { return data_[i]; }
  /// This PE's elements; the same address on every PE (null for a default-constructed handle).
  [[nodiscard]] T* data() const noexcept { return data_; }
  /// Elements per PE (0 for a default-constructed handle).
  [[nodiscard]] std::size_t size() const noexcept {
    return data_ == nullptr ? 0 : detail::symmetric_count(data_) / sizeof(T);
  }
  ///@{
  /// This PE's elements as a range.
  [[nodiscard]] T* begin() const noexcept { return data_; }
  [[nodiscard]] T* end() const noexcept { return data_ + size(); }
  ///@}

  // ---- one-sided operations --------------------------------------------------------------------
  // On element i (or elements [i, i + n)) of PE owner's array, from user code or handlers, with
  // no action of the owner's. Within a node, plain loads and stores and hardware atomics on the
  // owner's memory (mapped here); to other nodes, MPI one-sided operations (passive target).
  // Blocking forms have completed at the owner when they return (a put is visible to any PE's
  // later get). Non-blocking forms (_async) return a future: a get's is ready once the value is
  // here, an atomic's once its old value is here, a put's once `v` may be reused (the put, and
  // an atomic's update, are visible to others after quiet() or barrier()). PE and index are
  // checked (out of range stops the job).

  /// Element i of PE owner.
  [[nodiscard]] T get(pe owner, std::size_t i) const {
    T v;
    get(owner, i, std::span<T>(&v, 1));
    return v;
  }
  /// Elements [i, i + out.size()) of PE owner into out.
  void get(pe owner, std::size_t i, std::span<T> out) const {
    const T* at = checked("get", owner, i, out.size());
    if (const void* here = detail::symmetric_peer(owner.rank(), at))
      std::memcpy(out.data(), here, out.size_bytes());
    else
      detail::symmetric_get(owner.rank(), at, out.data(), out.size_bytes());
  }
  /// Sets element i of PE owner to v.
  void put(pe owner, std::size_t i, const T& v) const { put(owner, i, std::span<const T>(&v, 1)); }
  /// Sets elements [i, i + in.size()) of PE owner to in.
  void put(pe owner, std::size_t i, std::span<const T> in) const {
    T* at = checked("put", owner, i, in.size());
    if (void* here = detail::symmetric_peer(owner.rank(), at))
      std::memcpy(here, in.data(), in.size_bytes());
    else
      detail::symmetric_put(owner.rank(), at, in.data(), in.size_bytes());
  }
  /// Element i of PE owner, non-blocking.
  [[nodiscard]] future<T> get_async(pe owner, std::size_t i) const {
    const T* at = checked("get_async", owner, i, 1);
    if (const void* here = detail::symmetric_peer(owner.rank(), at)) {
      T v;
      std::memcpy(&v, here, sizeof(T));
      return make_ready_future(v);
    }
    auto v = std::make_shared<T>();
    return detail::symmetric_get_async(owner.rank(), at, v.get(), sizeof(T)).then([v] {
      return *v;
    });
  }
  /// Into out, which must stay valid until the future is ready.
  [[nodiscard]] future<void> get_async(pe owner, std::size_t i, std::span<T> out) const {
    const T* at = checked("get_async", owner, i, out.size());
    if (const void* here = detail::symmetric_peer(owner.rank(), at)) {
      std::memcpy(out.data(), here, out.size_bytes());
      return make_ready_future();
    }
    return detail::symmetric_get_async(owner.rank(), at, out.data(), out.size_bytes());
  }
  /// Sets element i of PE owner to v, non-blocking (v is copied at once).
  [[nodiscard]] future<void> put_async(pe owner, std::size_t i, const T& v) const {
    T* at = checked("put_async", owner, i, 1);
    if (void* here = detail::symmetric_peer(owner.rank(), at)) {
      std::memcpy(here, &v, sizeof(T));
      return make_ready_future();
    }
    auto keep = std::make_shared<T>(v);
    return detail::symmetric_put_async(owner.rank(), at, keep.get(), sizeof(T)).then([keep] {});
  }
  /// From in, which must stay valid until the future is ready.
  [[nodiscard]] future<void> put_async(pe owner, std::size_t i, std::span<const T> in) const {
    T* at = checked("put_async", owner, i, in.size());
    if (void* here = detail::symmetric_peer(owner.rank(), at)) {
      std::memcpy(here, in.data(), in.size_bytes());
      return make_ready_future();
    }
    return detail::symmetric_put_async(owner.rank(), at, in.data(), in.size_bytes());
  }

  // Atomics, on integers of 1, 2, 4 or 8 bytes: atomic with respect to every other atomic on the
  // element from any PE (not to its plain gets and puts, nor to the owner's plain accesses).
  // Hardware atomics when every PE's heap is mapped here (one node); else MPI's, for every PE
  // (this one included: MPI's atomics are atomic only with respect to each other). Each returns
  // the element's old value.
  /// Adds v to the element; returns the old value.
  T fetch_add(pe owner, std::size_t i, T v) const { return atomic(owner, i, op::add, v); }
  /// Adds v to the element (fetch_add without the old value).
  void add(pe owner, std::size_t i, T v) const { (void)atomic(owner, i, op::add, v); }
  /// The element becomes element & v; returns the old value.
  T fetch_and(pe owner, std::size_t i, T v) const { return atomic(owner, i, op::band, v); }
  /// The element becomes element | v; returns the old value.
  T fetch_or(pe owner, std::size_t i, T v) const { return atomic(owner, i, op::bor, v); }
  /// The element becomes element ^ v; returns the old value.
  T fetch_xor(pe owner, std::size_t i, T v) const { return atomic(owner, i, op::bxor, v); }
  /// Sets the element to v; returns the old value.
  T swap(pe owner, std::size_t i, T v) const { return atomic(owner, i, op::swap, v); }
  /// If the element equals expected, sets it to desired. Returns the old value either way.
  T compare_exchange(pe owner, std::size_t i, T expected, T desired) const {
    return atomic(owner, i, op::compare_swap, desired, expected);
  }
  /// The element, read atomically.
  [[nodiscard]] T load(pe owner, std::size_t i) const { return atomic(owner, i, op::load, T{}); }
  /// Sets the element to v atomically (a swap whose old value is dropped).
  void store(pe owner, std::size_t i, T v) const { (void)atomic(owner, i, op::swap, v); }
  /// fetch_add, non-blocking: the future holds the old value.
  [[nodiscard]] future<T> fetch_add_async(pe owner, std::size_t i, T v) const {
    return atomic_async(owner, i, op::add, v);
  }
  /// fetch_and, non-blocking: the future holds the old value.
  [[nodiscard]] future<T> fetch_and_async(pe owner, std::size_t i, T v) const {
    return atomic_async(owner, i, op::band, v);
  }
  /// fetch_or, non-blocking: the future holds the old value.
  [[nodiscard]] future<T> fetch_or_async(pe owner, std::size_t i, T v) const {
    return atomic_async(owner, i, op::bor, v);
  }
  /// fetch_xor, non-blocking: the future holds the old value.
  [[nodiscard]] future<T> fetch_xor_async(pe owner, std::size_t i, T v) const {
    return atomic_async(owner, i, op::bxor, v);
  }
  /// swap, non-blocking: the future holds the old value.
  [[nodiscard]] future<T> swap_async(pe owner, std::size_t i, T v) const {
    return atomic_async(owner, i, op::swap, v);
  }
  /// (Across nodes MPI has no non-blocking compare-and-swap: this one completes before it
  /// returns, with a ready future.)
  [[nodiscard]] future<T> compare_exchange_async(pe owner, std::size_t i, T expected,
                                                 T desired) const {
    return atomic_async(owner, i, op::compare_swap, desired, expected);
  }
  /// load, non-blocking.
  [[nodiscard]] future<T> load_async(pe owner, std::size_t i) const {
    return atomic_async(owner, i, op::load, T{});
  }

 private:
  using op = detail::atomic_op;
  // The element's address here (in this PE's array); checks PE and range.
  T* checked(const char* what, pe owner, std::size_t i, std::size_t n) const {
    const std::size_t sz = size();
    if (MAILROOM_UNLIKELY(static_cast<unsigned>(owner.rank()) >=
                              static_cast<unsigned>(detail::one_sided_pes()) ||
                          i > sz || n > sz - i))
      detail::one_sided_out_of_range(what, owner.rank(), i, n, sz);
    return data_ + i;
  }
  T atomic(pe owner, std::size_t i, op o, T operand, T compare = T{}) const {
    static_assert(detail::atomic_capable<T>,
                  "symmetric_array<T>: atomics need an integer T of 1, 2, 4 or 8 bytes");
    T* at = checked("atomic", owner, i, 1);
    if (void* here = detail::symmetric_atomic_peer(owner.rank(), at))
      return detail::atomic_here(static_cast<T*>(here), o, operand, compare);
    return detail::from_bits<T>(
        detail::symmetric_atomic(owner.rank(), at, detail::elem_type_of<T>(), o,
                                 detail::to_bits(operand), detail::to_bits(compare)));
  }
  future<T> atomic_async(pe owner, std::size_t i, op o, T operand, T compare = T{}) const {
    static_assert(detail::atomic_capable<T>,
                  "symmetric_array<T>: atomics need an integer T of 1, 2, 4 or 8 bytes");
    T* at = checked("atomic", owner, i, 1);
    if (void* here = detail::symmetric_atomic_peer(owner.rank(), at))
      return make_ready_future(detail::atomic_here(static_cast<T*>(here), o, operand, compare));
    return detail::symmetric_atomic_async(owner.rank(), at, detail::elem_type_of<T>(), o,
                                          detail::to_bits(operand), detail::to_bits(compare))
        .then([](std::uint64_t bits) { return detail::from_bits<T>(bits); });
  }

  T* data_ = nullptr;
};

/// Completes every put this PE started (blocking or not): afterwards each is visible to any PE's
/// get. Puts within a node are visible at once; across nodes, after this (or a barrier(), which
/// calls it on every PE). Callable from user code and handlers.
inline void quiet() { detail::quiet(); }
/// Orders this PE's puts: those before it are visible before those after it (as quiet()).
inline void fence() { detail::quiet(); }

/// One T per PE at the same address on every PE: per-PE state that lambda messages reach. Each
/// PE constructs it (collectively) with its own value, e.g. the addresses of its arrays; a
/// closure captures the handle (one pointer, like a symmetric_array) and reads, through `->`,
/// the value of the PE it runs on. Released like a symmetric_array (a symmetric_scope).
template <class T>
class symmetric {
 public:
  /// Collective: each PE gives its own value.
  explicit symmetric(const T& value, source_location loc = source_location::current())
      : a_(1, loc) {
    a_[0] = value;
  }
  /// This PE's value (where a closure runs: that PE's).
  [[nodiscard]] T& operator*() const noexcept { return a_[0]; }
  /// This PE's value (where a closure runs: that PE's).
  [[nodiscard]] T* operator->() const noexcept { return a_.data(); }
  /// PE owner's value (one-sided, as symmetric_array::get).
  [[nodiscard]] T get(pe owner) const { return a_.get(owner, 0); }
  /// Sets PE owner's value (one-sided, as symmetric_array::put).
  void put(pe owner, const T& v) const { a_.put(owner, 0, v); }
  /// get, non-blocking (as symmetric_array::get_async).
  [[nodiscard]] future<T> get_async(pe owner) const { return a_.get_async(owner, 0); }
  /// put, non-blocking (as symmetric_array::put_async).
  [[nodiscard]] future<void> put_async(pe owner, const T& v) const {
    return a_.put_async(owner, 0, v);
  }

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
