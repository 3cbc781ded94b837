// SPDX-License-Identifier: MIT
// What a mailbox is, as a selector's constructor takes it: its message type (typed, variable-size
// span_of<T>, serialized<T>, or closures: lambdas) and its handler, a name, whether its handlers
// may run concurrently; and mailbox_id / to<I>, which name a selector's mailbox in a send.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>
#include <utility>

namespace mailroom {

namespace detail {
/// A handler whose mailbox combines messages at the sender (mailbox_spec::reduce): called as H.
template <class H, class Key, class Combine>
struct reducing {
  H handler;
  Key key;          ///< key(msg): messages to one PE with equal keys may be combined
  Combine combine;  ///< combine(into, msg): folds msg into an unsent message of the same key
  template <class... A>
    requires std::is_invocable_v<H&, A...>
  decltype(auto) operator()(A&&... a) {
    return handler(std::forward<A>(a)...);
  }
};
template <class H>
inline constexpr bool is_reducing = false;
template <class H, class K, class C>
inline constexpr bool is_reducing<reducing<H, K, C>> = true;
// reduce(op) for messages with an index and a value (at<T>): the key is the index, and op
// combines the values.
struct index_key {
  template <class M>
  std::uint64_t operator()(const M& m) const noexcept {
    return static_cast<std::uint64_t>(m.index);
  }
};
template <class Op>
struct combine_values {
  Op op;
  template <class M>
  void operator()(M& into, const M& m) const {
    into.value = op(into.value, m.value);
  }
};
}  // namespace detail

/// A combining rule that keeps the first of two messages: reduce(keep_first{}) drops the
/// duplicates of a message (visited sets) while it waits to leave.
struct keep_first {
  /// The first.
  template <class V>
  const V& operator()(const V& first, const V&) const noexcept {
    return first;
  }
};

/// Describes a mailbox of typed messages T handled by `handler`, for a selector's constructor.
/// The handler is called as handler(msg, from, self), handler(msg, from) or handler(msg),
/// whichever it accepts; `self` is the selector, to send from inside the handler.
template <class T, class H>
struct mailbox_spec {
  static_assert(std::is_trivially_copyable_v<T>,
                "mailbox<T>: T must be trivially copyable (messages are copied byte-wise into "
                "aggregation buffers); send indices or plain structs, not owning objects");
  /// The mailbox's message type.
  using message_type = T;
  /// Called on the destination PE for every message to this mailbox.
  H handler;
  bool concurrent = false;  ///< see mailroom::concurrent
  std::string_view name{};  ///< see named()

  /// Names the mailbox, for errors, the watchdog's reports and statistics:
  /// `mailroom::mailbox<visit>(handler).named("visits")` (copied when the selector is built).
  [[nodiscard]] mailbox_spec named(std::string_view n) && {
    name = n;
    return std::move(*this);
  }
  /// Message reductions (Active Pebbles): a message to a PE that still has an unsent message of
  /// the same key(msg) from this sender is folded into it by combine(into, msg) instead of
  /// travelling; every message's effect must then be the combined message's (counts add, a
  /// minimum keeps the least, a visited set keeps one). key returns a std::uint64_t. The sender
  /// holds back up to MAILROOM_REDUCE_SLOTS messages per mailbox (direct-mapped by key and PE),
  /// which leave when evicted, and all before the mailbox may terminate; messages of a reducing
  /// mailbox keep no order. Sends of pool workers (and of the main flow under the progress
  /// thread) are not combined. statistics::messages_combined counts the folded ones.
  template <class Key, class Combine>
  [[nodiscard]] mailbox_spec<T, detail::reducing<H, Key, Combine>> reduce(Key key,
                                                                          Combine combine) && {
    return {{std::move(handler), std::move(key), std::move(combine)}, concurrent, name};
  }
  /// reduce for messages of an index and a value (at<V>): same index, values combined by op
  /// (mailroom::plus<>{}, min<>{}, max<>{}, keep_first{}, or any op(a, b) of two values).
  template <class Op>
    requires requires(const T& m) {
      m.index;
      m.value;
    }
  [[nodiscard]] auto reduce(Op op) && {
    return std::move(*this).reduce(detail::index_key{}, detail::combine_values<Op>{std::move(op)});
  }
};

/// A mailbox of messages of type T: `mailroom::mailbox<request>([&](request r, pe from) {...})`.
template <class T, class H>
[[nodiscard]] mailbox_spec<T, std::decay_t<H>> mailbox(H&& handler) {
  return {std::forward<H>(handler)};
}

/// Tag of a mailbox whose handlers may run concurrently on the PE's workers.
struct concurrent_t {
  explicit constexpr concurrent_t() = default;
};
/// `mailbox<T>(handler, concurrent)`: with several workers (MAILROOM_WORKERS), the arrivals of
/// this mailbox are handed to the workers buffer by buffer, so its handler runs on several
/// threads at once and must be safe to (atomics, or state per worker: this_worker()). From a pool
/// worker a handler may send and spawn as any handler may; sender() is set only for what a
/// worker sent to its own PE (use the handler's `from`). Exactly-once and termination hold
/// unchanged; at most a few buffers per worker are taken in ahead of their handlers (the rest
/// wait in the aggregation layer, under its back-pressure). With one worker, an ordinary
/// mailbox.
inline constexpr concurrent_t concurrent{};
/// A mailbox of messages of type T whose handler may run on several workers at once.
template <class T, class H>
[[nodiscard]] mailbox_spec<T, std::decay_t<H>> mailbox(H&& handler, concurrent_t) {
  return {std::forward<H>(handler), true};
}

/// The message type of a mailbox of variable-size messages: arrays of T (trivially copyable) of
/// any length. Its handler takes std::span<const T>, valid during the call: handler(items, from,
/// self), handler(items, from) or handler(items). send<I>(pe, items) takes a std::span<const T>
/// (a vector or an array converts). Those that fit in a buffer (selector::var_room) are
/// aggregated as fixed-size messages are, after an 8-byte length word; a larger one travels in
/// buffer-sized pieces, reassembled on its PE before the handler runs once on the whole.
template <class T>
struct span_of {
  static_assert(std::is_trivially_copyable_v<T>,
                "span_of<T>: T must be trivially copyable (its bytes cross the wire)");
  /// The type of the items.
  using value_type = T;
};

/// The message type of a mailbox of values of T serialised with cereal (strings, vectors, maps,
/// structs with a serialize function): mailroom/serialized.hpp.
template <class T>
struct serialized;

/// Names mailbox I of a selector as an argument: `self.send(mailroom::to<1>, pe, msg)` is
/// `self.template send<1>(pe, msg)` without the `template` keyword that a generic handler's
/// `self` otherwise needs.
template <std::size_t I>
struct mailbox_id {
  /// The mailbox's index in its selector.
  static constexpr std::size_t index = I;
};
/// Mailbox I as an argument: `self.send(mailroom::to<1>, pe, msg)`.
template <std::size_t I>
inline constexpr mailbox_id<I> to{};

/// A mailbox whose messages are closures: send(pe, [=] { ... }) runs the closure on that PE.
/// `mailroom::lambdas{"requests"}` names it (see mailbox_spec::named).
struct lambdas {
  /// void: the messages are closures.
  using message_type = void;
  /// The mailbox's name, for errors, the watchdog's reports and statistics (empty: none).
  std::string_view name{};
};

}  // namespace mailroom
