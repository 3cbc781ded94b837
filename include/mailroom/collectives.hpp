// SPDX-License-Identifier: MIT
// Collectives of the program over a team (the whole job by default): all_reduce, broadcast,
// gather, all_gather, exclusive_scan, all_to_all(_v) and barrier. Each has a blocking form, which
// keeps the progress engine running while it waits (handlers run; a peer waiting for this PE's
// acknowledgements is never stuck), and a non-blocking form (`_async`) that returns a future:
// several may be in flight at once, beside actor traffic, as long as every member starts them in
// the same order (as MPI requires). Callbacks run through the future's then().
//
// Who may call: user code on every member of the team, in the same order; never a handler (the
// call is collective; a handler stops the job with an error). Values are trivially copyable.
// Reductions with mailroom's (or std's) plus, multiplies, min, max and bitwise operations on
// arithmetic types run as MPI's own; any other associative function runs element by element, in
// rank order (it need not commute).
#pragma once

#include "mailroom/detail/reduction.hpp"
#include "mailroom/error.hpp"
#include "mailroom/future.hpp"
#include "mailroom/symmetric.hpp"
#include "mailroom/team.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <numeric>
#include <span>
#include <type_traits>
#include <vector>

namespace mailroom {

// ---- operations --------------------------------------------------------------------------------
/// a + b. plus<> (the default) deduces the type.
template <class T = void>
struct plus {
  /// Returns a + b.
  constexpr T operator()(const T& a, const T& b) const { return a + b; }
};
/// a * b.
template <class T = void>
struct multiplies {
  /// Returns a * b.
  constexpr T operator()(const T& a, const T& b) const { return a * b; }
};
/// The smaller of a and b.
template <class T = void>
struct min {
  /// Returns the smaller of a and b (a when equal).
  constexpr T operator()(const T& a, const T& b) const { return b < a ? b : a; }
};
/// The larger of a and b.
template <class T = void>
struct max {
  /// Returns the larger of a and b (a when equal).
  constexpr T operator()(const T& a, const T& b) const { return a < b ? b : a; }
};
/// a & b.
template <class T = void>
struct bit_and {
  /// Returns a & b.
  constexpr T operator()(const T& a, const T& b) const { return a & b; }
};
/// a | b.
template <class T = void>
struct bit_or {
  /// Returns a | b.
  constexpr T operator()(const T& a, const T& b) const { return a | b; }
};
/// a ^ b.
template <class T = void>
struct bit_xor {
  /// Returns a ^ b.
  constexpr T operator()(const T& a, const T& b) const { return a ^ b; }
};
#define MAILROOM_DEDUCING_OP(name, expr)                   \
  template <>                                              \
  struct name<void> {                                      \
    template <class T>                                     \
    constexpr T operator()(const T& a, const T& b) const { \
      return expr;                                         \
    }                                                      \
  };
MAILROOM_DEDUCING_OP(plus, a + b)
MAILROOM_DEDUCING_OP(multiplies, a* b)
MAILROOM_DEDUCING_OP(min, b < a ? b : a)
MAILROOM_DEDUCING_OP(max, a < b ? b : a)
MAILROOM_DEDUCING_OP(bit_and, a& b)
MAILROOM_DEDUCING_OP(bit_or, a | b)
MAILROOM_DEDUCING_OP(bit_xor, a ^ b)
#undef MAILROOM_DEDUCING_OP

namespace detail {
template <class Op, template <class> class Name>
constexpr bool is_op =
    std::is_same_v<Op, Name<void>> || std::is_same_v<Op, Name<int>> ||
    std::is_same_v<Op, Name<long>> || std::is_same_v<Op, Name<long long>> ||
    std::is_same_v<Op, Name<unsigned>> || std::is_same_v<Op, Name<unsigned long>> ||
    std::is_same_v<Op, Name<double>> || std::is_same_v<Op, Name<float>>;

// The operation as MPI knows it, when it does (for this T: bitwise ones on integers only; an
// operation object with the wrong T spelled out, say plus<int> over doubles, stays custom).
template <class T, class Op>
constexpr reduce_kind kind_of() {
  constexpr bool integer = std::is_integral_v<T>;
  using Own = std::conditional_t<std::is_empty_v<Op>, Op, void>;
  if constexpr (std::is_same_v<Own, plus<>> || std::is_same_v<Own, plus<T>> ||
                std::is_same_v<Own, std::plus<>> || std::is_same_v<Own, std::plus<T>>)
    return reduce_kind::sum;
  if constexpr (std::is_same_v<Own, multiplies<>> || std::is_same_v<Own, multiplies<T>> ||
                std::is_same_v<Own, std::multiplies<>> || std::is_same_v<Own, std::multiplies<T>>)
    return reduce_kind::prod;
  if constexpr (std::is_same_v<Own, min<>> || std::is_same_v<Own, min<T>>) return reduce_kind::min;
  if constexpr (std::is_same_v<Own, max<>> || std::is_same_v<Own, max<T>>) return reduce_kind::max;
  if constexpr (integer &&
                (std::is_same_v<Own, bit_and<>> || std::is_same_v<Own, bit_and<T>> ||
                 std::is_same_v<Own, std::bit_and<>> || std::is_same_v<Own, std::bit_and<T>>))
    return reduce_kind::band;
  if constexpr (integer &&
                (std::is_same_v<Own, bit_or<>> || std::is_same_v<Own, bit_or<T>> ||
                 std::is_same_v<Own, std::bit_or<>> || std::is_same_v<Own, std::bit_or<T>>))
    return reduce_kind::bor;
  if constexpr (integer &&
                (std::is_same_v<Own, bit_xor<>> || std::is_same_v<Own, bit_xor<T>> ||
                 std::is_same_v<Own, std::bit_xor<>> || std::is_same_v<Own, std::bit_xor<T>>))
    return reduce_kind::bxor;
  return reduce_kind::custom;
}

// inout[i] = op(in[i], inout[i]); copies through locals (MPI's buffers need not be aligned for T).
template <class T, class Op>
void combine(const void* in, void* inout, std::size_t count, const void* ctx) {
  const Op& op = *static_cast<const Op*>(ctx);
  const auto* a = static_cast<const std::byte*>(in);
  auto* b = static_cast<std::byte*>(inout);
  for (std::size_t i = 0; i < count; ++i, a += sizeof(T), b += sizeof(T)) {
    T x, y;
    std::memcpy(&x, a, sizeof(T));
    std::memcpy(&y, b, sizeof(T));
    const T z = op(x, y);
    std::memcpy(b, &z, sizeof(T));
  }
}

template <class T, class Op>
reduction reduction_of(const Op& op) {
  static_assert(std::is_invocable_r_v<T, const Op&, const T&, const T&>,
                "mailroom reduction: the operation must be callable as op(T, T) -> T");
  return reduction{elem_type_of<T>(), kind_of<T, Op>(), sizeof(T), &combine<T, Op>, &op};
}

// An operation with no state (mailroom's and std's, a lambda that captures nothing): one object
// of it for the whole program stands in for the caller's, so a reduction in flight keeps none.
template <class Op>
constexpr bool stateless = std::is_empty_v<Op> && std::is_default_constructible_v<Op>;
template <class Op>
inline const Op stateless_op{};

template <class T>
constexpr void check_value() {
  static_assert(std::is_trivially_copyable_v<T>,
                "mailroom collectives: the value type must be trivially copyable (send the "
                "elements of a container through the std::span overloads)");
}

template <class T>
struct is_span : std::false_type {};
template <class T, std::size_t N>
struct is_span<std::span<T, N>> : std::true_type {};

// Start one collective on the team and return a future that is ready once it has completed
// (src/pgas/collectives.cpp). Buffers must stay valid until then. With `wait`, complete it
// first, running the progress engine (the blocking forms).
future<void> start_all_reduce(const team& t, const void* in, void* out, std::size_t count,
                              const reduction& r, bool wait);
future<void> start_exclusive_scan(const team& t, const void* in, void* out, std::size_t count,
                                  const reduction& r, bool wait);
future<void> start_broadcast(const team& t, void* data, std::size_t bytes, int root, bool wait);
future<void> start_gather(const team& t, const void* in, void* out, std::size_t bytes, int root,
                          bool wait);
future<void> start_all_gather(const team& t, const void* in, void* out, std::size_t bytes,
                              bool wait);
future<void> start_all_to_all(const team& t, const void* in, void* out, std::size_t bytes,
                              bool wait);
/// Exchanges the counts (waiting for them), then starts the data; out(n) gives room for the n
/// elements that arrive (by source).
future<void> start_all_to_all_v(const team& t, const void* send, std::span<const int> counts,
                                std::span<const int> displs, std::size_t elem_bytes,
                                const std::function<void*(std::size_t)>& out, bool wait);
/// MPI_Alltoallv itself: both sides' counts and displacements given.
future<void> start_all_to_all_v(const team& t, const void* send, const int* send_counts,
                                const int* send_displs, void* recv, const int* recv_counts,
                                const int* recv_displs, std::size_t elem_bytes, bool wait);
future<void> start_barrier(const team& t, bool wait);
/// The blocking all_reduce and exclusive_scan: start_*(..., true) without a future to return,
/// so that the call passes every argument in a register (one on the stack, in a call that may
/// throw, costs the calling function its frame-pointer register: docs/design.md).
void all_reduce_now(const team& t, const void* in, void* out, std::size_t count,
                    const reduction& r);
void exclusive_scan_now(const team& t, const void* in, void* out, std::size_t count,
                        const reduction& r);
}  // namespace detail

// ---- all_reduce --------------------------------------------------------------------------------
/// Every member's `v` combined with `op` (in rank order), on every member. Non-blocking.
template <class T, class Op = plus<>>
  requires(!detail::is_span<T>::value)
[[nodiscard]] future<T> all_reduce_async(const T& v, Op op = {}, const team& t = team::world(),
                                         source_location loc = source_location::current()) {
  const detail::call_site here(loc);
  detail::check_value<T>();
  struct box {
    T in, out;
    Op op;
  };
  auto b = std::make_shared<box>(box{v, v, std::move(op)});
  return detail::start_all_reduce(t, &b->in, &b->out, 1, detail::reduction_of<T>(b->op), false)
      .then([b] { return b->out; });
}
/// Blocking all_reduce_async.
template <class T, class Op = plus<>>
  requires(!detail::is_span<T>::value)
T all_reduce(const T& v, Op op = {}, const team& t = team::world(),
             source_location loc = source_location::current()) {
  const detail::call_site here(loc);
  detail::check_value<T>();
  T out = v;
  detail::all_reduce_now(t, &v, &out, 1, detail::reduction_of<T>(op));
  return out;
}
/// Element-wise: out[i] = in[i] combined over the members. Both spans, of the same size on
/// every member, stay valid until the future is ready. Non-blocking.
template <class T, class Op = plus<>>
[[nodiscard]] future<void> all_reduce_async(std::span<const T> in, std::span<T> out, Op op = {},
                                            const team& t = team::world(),
                                            source_location loc = source_location::current()) {
  const detail::call_site here(loc);
  detail::check_value<T>();
  MAILROOM_CHECK(in.size() == out.size(), "all_reduce: {} elements in, room for {} out", in.size(),
                 out.size());
  if constexpr (detail::stateless<Op>) {
    // (Nothing to keep alive: the reduction applies a copy that lives for ever.)
    return detail::start_all_reduce(t, in.data(), out.data(), in.size(),
                                    detail::reduction_of<T>(detail::stateless_op<Op>), false);
  } else {
    auto keep = std::make_shared<Op>(std::move(op));
    return detail::start_all_reduce(t, in.data(), out.data(), in.size(),
                                    detail::reduction_of<T>(*keep), false)
        .then([keep] {});
  }
}
/// Blocking element-wise all_reduce_async: returns once `out` holds the result.
template <class T, class Op = plus<>>
void all_reduce(std::span<const T> in, std::span<T> out, Op op = {}, const team& t = team::world(),
                source_location loc = source_location::current()) {
  const detail::call_site here(loc);
  detail::check_value<T>();
  MAILROOM_CHECK(in.size() == out.size(), "all_reduce: {} elements in, room for {} out", in.size(),
                 out.size());
  (void)detail::start_all_reduce(t, in.data(), out.data(), in.size(), detail::reduction_of<T>(op),
                                 true);
}
/// In place: data[i] becomes data[i] combined over the members.
template <class T, class Op = plus<>>
[[nodiscard]] future<void> all_reduce_async(std::span<T> data, Op op = {},
                                            const team& t = team::world(),
                                            source_location loc = source_location::current()) {
  const detail::call_site here(loc);
  auto in = std::make_shared<std::vector<T>>(data.begin(), data.end());
  return all_reduce_async(std::span<const T>(*in), data, std::move(op), t, loc).then([in] {});
}
/// Blocking in-place all_reduce_async.
template <class T, class Op = plus<>>
void all_reduce(std::span<T> data, Op op = {}, const team& t = team::world(),
                source_location loc = source_location::current()) {
  const detail::call_site here(loc);
  const std::vector<T> in(data.begin(), data.end());
  all_reduce(std::span<const T>(in), data, std::move(op), t, loc);
}

// ---- exclusive_scan ----------------------------------------------------------------------------
/// init op v_0 op ... op v_{r-1} on member r (init on member 0), as std::exclusive_scan.
template <class T, class Op = plus<>>
  requires(!detail::is_span<T>::value)
[[nodiscard]] future<T> exclusive_scan_async(const T& v, const T& init, Op op = {},
                                             const team& t = team::world(),
                                             source_location loc = source_location::current()) {
  const detail::call_site here(loc);
  detail::check_value<T>();
  struct box {
    T in, out, init;
    Op op;
  };
  auto b = std::make_shared<box>(box{v, init, init, std::move(op)});
  const bool first = t.rank() == 0;
  return detail::start_exclusive_scan(t, &b->in, &b->out, 1, detail::reduction_of<T>(b->op), false)
      .then([b, first] { return first ? b->init : b->op(b->init, b->out); });
}
/// Blocking exclusive_scan_async.
template <class T, class Op = plus<>>
  requires(!detail::is_span<T>::value)
T exclusive_scan(const T& v, const T& init, Op op = {}, const team& t = team::world(),
                 source_location loc = source_location::current()) {
  const detail::call_site here(loc);
  detail::check_value<T>();
  T out = init;
  detail::exclusive_scan_now(t, &v, &out, 1, detail::reduction_of<T>(op));
  return t.rank() == 0 ? init : op(init, out);
}

/// Element-wise: out[i] = init op in_0[i] op ... op in_{r-1}[i] on member r. The spans (of the
/// same size on every member) stay valid until the future is ready.
template <class T, class Op = plus<>>
[[nodiscard]] future<void> exclusive_scan_async(std::span<const T> in, std::span<T> out,
                                                const T& init, Op op = {},
                                                const team& t = team::world(),
                                                source_location loc = source_location::current()) {
  const detail::call_site here(loc);
  detail::check_value<T>();
  MAILROOM_CHECK(in.size() == out.size(), "exclusive_scan: {} elements in, room for {} out",
                 in.size(), out.size());
  struct box {
    T init;
    Op op;
  };
  auto b = std::make_shared<box>(box{init, std::move(op)});
  const bool first = t.rank() == 0;
  return detail::start_exclusive_scan(t, in.data(), out.data(), in.size(),
                                      detail::reduction_of<T>(b->op), false)
      .then([b, out, first] {
        for (T& x : out) x = first ? b->init : b->op(b->init, x);
      });
}
/// Blocking element-wise exclusive_scan_async.
template <class T, class Op = plus<>>
void exclusive_scan(std::span<const T> in, std::span<T> out, const T& init, Op op = {},
                    const team& t = team::world(),
                    source_location loc = source_location::current()) {
  const detail::call_site here(loc);
  exclusive_scan_async(in, out, init, std::move(op), t, loc).get();
}

// ---- broadcast ---------------------------------------------------------------------------------
/// Member `root`'s v, on every member (v is read on root only).
template <class T>
  requires(!detail::is_span<T>::value)
[[nodiscard]] future<T> broadcast_async(const T& v, int root, const team& t = team::world(),
                                        source_location loc = source_location::current()) {
  const detail::call_site here(loc);
  detail::check_value<T>();
  auto b = std::make_shared<T>(v);
  return detail::start_broadcast(t, b.get(), sizeof(T), root, false).then([b] { return *b; });
}
/// Blocking broadcast_async.
template <class T>
  requires(!detail::is_span<T>::value)
T broadcast(const T& v, int root, const team& t = team::world(),
            source_location loc = source_location::current()) {
  const detail::call_site here(loc);
  detail::check_value<T>();
  T out = v;
  (void)detail::start_broadcast(t, &out, sizeof(T), root, true);
  return out;
}
/// Root's data into every member's data (same size everywhere; valid until ready).
template <class T>
[[nodiscard]] future<void> broadcast_async(std::span<T> data, int root,
                                           const team& t = team::world(),
                                           source_location loc = source_location::current()) {
  const detail::call_site here(loc);
  detail::check_value<T>();
  return detail::start_broadcast(t, data.data(), data.size_bytes(), root, false);
}
/// Blocking broadcast_async of a span.
template <class T>
void broadcast(std::span<T> data, int root, const team& t = team::world(),
               source_location loc = source_location::current()) {
  const detail::call_site here(loc);
  detail::check_value<T>();
  (void)detail::start_broadcast(t, data.data(), data.size_bytes(), root, true);
}

// ---- gather and all_gather ---------------------------------------------------------------------
/// Every member's v by rank, on `root` (an empty vector elsewhere).
template <class T>
[[nodiscard]] future<std::vector<T>> gather_async(
    const T& v, int root, const team& t = team::world(),
    source_location loc = source_location::current()) {
  const detail::call_site here(loc);
  detail::check_value<T>();
  struct box {
    T in;
    std::vector<T> out;
  };
  auto b = std::make_shared<box>(box{v, {}});
  if (t.rank() == root) b->out.resize(static_cast<std::size_t>(t.size()), v);
  return detail::start_gather(t, &b->in, b->out.data(), sizeof(T), root, false).then([b] {
    return std::move(b->out);
  });
}
/// Blocking gather_async.
template <class T>
std::vector<T> gather(const T& v, int root, const team& t = team::world(),
                      source_location loc = source_location::current()) {
  const detail::call_site here(loc);
  return gather_async(v, root, t, loc).get();
}
/// Every member's v by rank, on every member.
template <class T>
  requires(!detail::is_span<T>::value)
[[nodiscard]] future<std::vector<T>> all_gather_async(
    const T& v, const team& t = team::world(), source_location loc = source_location::current()) {
  const detail::call_site here(loc);
  return all_gather_async(std::span<const T>(&v, 1), t, loc);
}
/// Blocking all_gather_async.
template <class T>
  requires(!detail::is_span<T>::value)
std::vector<T> all_gather(const T& v, const team& t = team::world(),
                          source_location loc = source_location::current()) {
  const detail::call_site here(loc);
  return all_gather_async(v, t, loc).get();
}
/// Every member's elements (the same number on each) by rank, on every member.
template <class T>
[[nodiscard]] future<std::vector<T>> all_gather_async(
    std::span<const T> v, const team& t = team::world(),
    source_location loc = source_location::current()) {
  const detail::call_site here(loc);
  detail::check_value<T>();
  struct box {
    std::vector<T> in, out;
  };
  auto b = std::make_shared<box>(box{{v.begin(), v.end()}, {}});
  b->out.resize(v.size() * static_cast<std::size_t>(t.size()));
  return detail::start_all_gather(t, b->in.data(), b->out.data(), v.size_bytes(), false).then([b] {
    return std::move(b->out);
  });
}
/// Blocking all_gather_async of a span.
template <class T>
std::vector<T> all_gather(std::span<const T> v, const team& t = team::world(),
                          source_location loc = source_location::current()) {
  const detail::call_site here(loc);
  return all_gather_async(v, t, loc).get();
}

// ---- all_to_all --------------------------------------------------------------------------------
/// send holds size() blocks of equal length, block r for member r; the result holds the blocks
/// sent to this member, by source. The _async form reads `send` while in flight: it stays valid
/// until the future is ready.
template <class T>
[[nodiscard]] future<std::vector<T>> all_to_all_async(
    std::span<const T> send, const team& t = team::world(),
    source_location loc = source_location::current()) {
  const detail::call_site here(loc);
  detail::check_value<T>();
  const auto n = static_cast<std::size_t>(t.size());
  MAILROOM_CHECK(send.size() % n == 0,
                 "all_to_all: {} elements do not split into {} equal "
                 "blocks",
                 send.size(), n);
  auto out = std::make_shared<std::vector<T>>(send.size());
  return detail::start_all_to_all(t, send.data(), out->data(), send.size_bytes() / n, false)
      .then([out] { return std::move(*out); });
}
/// Blocking all_to_all_async.
template <class T>
std::vector<T> all_to_all(std::span<const T> send, const team& t = team::world(),
                          source_location loc = source_location::current()) {
  const detail::call_site here(loc);
  detail::check_value<T>();
  const auto n = static_cast<std::size_t>(t.size());
  MAILROOM_CHECK(send.size() % n == 0,
                 "all_to_all: {} elements do not split into {} equal "
                 "blocks",
                 send.size(), n);
  std::vector<T> out(send.size());
  (void)detail::start_all_to_all(t, send.data(), out.data(), send.size_bytes() / n, true);
  return out;
}
/// counts[r] elements of send for member r, starting at displs[r] (contiguous in rank order when
/// displs is empty); the result holds what was sent to this member, by source. The _async form
/// exchanges the counts before it returns (a small all_to_all, handlers running meanwhile) and
/// leaves the data in flight: its collectives then start in the caller's order on every member.
/// `send` stays valid until the future is ready.
template <class T>
[[nodiscard]] future<std::vector<T>> all_to_all_v_async(
    std::span<const T> send, std::span<const int> counts, std::span<const int> displs = {},
    const team& t = team::world(), source_location loc = source_location::current()) {
  const detail::call_site here(loc);
  detail::check_value<T>();
  auto out = std::make_shared<std::vector<T>>();
  return detail::start_all_to_all_v(
             t, send.data(), counts, displs, sizeof(T),
             [out](std::size_t n) -> void* {
               out->resize(n);
               return out->data();
             },
             false)
      .then([out] { return std::move(*out); });
}
/// Blocking all_to_all_v_async.
template <class T>
std::vector<T> all_to_all_v(std::span<const T> send, std::span<const int> counts,
                            std::span<const int> displs = {}, const team& t = team::world(),
                            source_location loc = source_location::current()) {
  const detail::call_site here(loc);
  return all_to_all_v_async(send, counts, displs, t, loc).get();
}

namespace detail {
template <class T>
future<void> all_to_all_v_layout(std::span<const T> send, std::span<const int> send_counts,
                                 std::span<const int> send_displs, std::span<T> recv,
                                 std::span<const int> recv_counts, std::span<const int> recv_displs,
                                 const team& t, bool wait) {
  detail::check_value<T>();
  const auto n = static_cast<std::size_t>(t.size());
  MAILROOM_CHECK(send_counts.size() == n && send_displs.size() == n && recv_counts.size() == n &&
                     recv_displs.size() == n,
                 "all_to_all_v: counts and displacements need one entry per member ({})", n);
  return start_all_to_all_v(t, send.data(), send_counts.data(), send_displs.data(), recv.data(),
                            recv_counts.data(), recv_displs.data(), sizeof(T), wait);
}
}  // namespace detail

/// MPI_Alltoallv's own form, for loops that know both sides' counts (say from an all_to_all of
/// them): send_counts[r] elements of send, from send_displs[r], go to member r, and
/// recv_counts[s] elements from member s land at recv[recv_displs[s]]. Every span stays valid
/// until the future is ready.
template <class T>
[[nodiscard]] future<void> all_to_all_v_async(
    std::span<const T> send, std::span<const int> send_counts, std::span<const int> send_displs,
    std::span<T> recv, std::span<const int> recv_counts, std::span<const int> recv_displs,
    const team& t = team::world(), source_location loc = source_location::current()) {
  const detail::call_site here(loc);
  return detail::all_to_all_v_layout(send, send_counts, send_displs, recv, recv_counts, recv_displs,
                                     t, false);
}
/// Blocking all_to_all_v_async in MPI_Alltoallv's form.
template <class T>
void all_to_all_v(std::span<const T> send, std::span<const int> send_counts,
                  std::span<const int> send_displs, std::span<T> recv,
                  std::span<const int> recv_counts, std::span<const int> recv_displs,
                  const team& t = team::world(), source_location loc = source_location::current()) {
  const detail::call_site here(loc);
  (void)detail::all_to_all_v_layout(send, send_counts, send_displs, recv, recv_counts, recv_displs,
                                    t, true);
}

// ---- barrier -----------------------------------------------------------------------------------
/// Ready once every member has started it.
[[nodiscard]] inline future<void> barrier_async(const team& t = team::world(),
                                                source_location loc = source_location::current()) {
  const detail::call_site here(loc);
  return detail::start_barrier(t, false);
}
/// Waits until every member of t arrives, running handlers meanwhile. Every put a member
/// started before it is visible to every member after it.
inline void barrier(const team& t, source_location loc = source_location::current()) {
  const detail::call_site here(loc);
  quiet();
  (void)detail::start_barrier(t, true);
}

}  // namespace mailroom
