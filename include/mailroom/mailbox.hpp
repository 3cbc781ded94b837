// SPDX-License-Identifier: MIT
// What a mailbox is, as a selector's constructor takes it: its message type (typed, variable-size
// span_of<T>, serialized<T>, or closures: lambdas) and its handler, a name, whether its handlers
// may run concurrently; and mailbox_id / to<I>, which name a selector's mailbox in a send.
#pragma once

#include <cstddef>
#include <string_view>
#include <type_traits>
#include <utility>

namespace mailroom {

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
