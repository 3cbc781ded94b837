// SPDX-License-Identifier: MIT
// Selectors: several mailboxes, each with its own message type (or lambda messages) and handler,
// partitioned over all PEs; the runtime aggregates sends, runs handlers on the owning PE and
// closes the mailboxes along their dependency graph.
#pragma once

#include "mailroom/detail/lambda_registry.hpp"
#include "mailroom/detail/scheduler.hpp"
#include "mailroom/detail/signature.hpp"
#include "mailroom/runtime.hpp"
#include "mailroom/termination.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

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

namespace detail {

template <class H, class T, class Sel>
inline void call_handler(H& h, const T& msg, pe from, Sel& self) {
  if constexpr (std::is_invocable_v<H&, const T&, pe, Sel&>) {
    h(msg, from, self);
  } else if constexpr (std::is_invocable_v<H&, const T&, pe>) {
    h(msg, from);
  } else if constexpr (std::is_invocable_v<H&, const T&>) {
    h(msg);
  } else {
    static_assert(std::is_invocable_v<H&, const T&, pe>,
                  "mailbox handler: must be callable as handler(msg, from, self), "
                  "handler(msg, from) or handler(msg), with msg of the mailbox's type and from a "
                  "mailroom::pe");
  }
}

template <class Spec, class Sel>
class mailbox_impl;

template <class T>
inline constexpr bool is_span_of = false;
template <class T>
inline constexpr bool is_span_of<span_of<T>> = true;
template <class T>
inline constexpr bool is_serialized = false;
template <class T>
inline constexpr bool is_serialized<serialized<T>> = true;

/// What a handler of messages of type M receives and a send takes: M itself, the span of a
/// span_of, the value of a serialized.
template <class M>
struct message_arg {
  using type = M;
};
template <class U>
struct message_arg<span_of<U>> {
  using type = std::span<const U>;
};
template <class U>
struct message_arg<serialized<U>> {
  using type = U;
};
template <class M>
using message_arg_t = typename message_arg<M>::type;

// The handler of a mailbox of serialized<T>: decodes the bytes, then calls the user's handler.
template <class T, class H, class Sel>
struct decoding_handler {
  H inner;
  void operator()(std::span<const std::byte> bytes, pe from, Sel& self) {
    const T value = serialized<T>::decode(bytes);
    call_handler(inner, value, from, self);
  }
};

// A mailbox as its selector's signature sees it (detail/signature.hpp).
template <class Spec>
struct spec_box;
template <class T, class H>
struct spec_box<mailbox_spec<T, H>> : box_of<T, H> {};
template <>
struct spec_box<lambdas> : box_of<void, lambdas> {};

/// The type a type-erased handler was made from (actor<T>'s), for the mailbox's signature; null
/// for the others, whose type is the handler's own.
template <class Spec>
const std::type_info* handler_origin(const Spec& spec) noexcept {
  if constexpr (requires { spec.handler.origin; })
    return spec.handler.origin;
  else
    return nullptr;
}

template <class T, class H, class Sel>
class mailbox_impl<mailbox_spec<T, H>, Sel> final : public mailbox_base {
 public:
  mailbox_impl(mailbox_spec<T, H>&& spec, Sel* self, std::uint32_t signature,
               const team_lanes* team)
      : mailbox_base(false, signature, sizeof(T), team),
        handler_(std::move(spec.handler)),
        self_(self) {
    name = spec.name;
    concurrent_handlers = spec.concurrent && workers() > 1;
    MAILROOM_CHECK(workers() == 1 || 4 + sizeof(T) <= stage_block::k_bytes,
                   "mailbox message of {} bytes: with MAILROOM_WORKERS > 1 a message is at most "
                   "{} bytes (the blocks in which workers stage their sends)",
                   sizeof(T), stage_block::k_bytes - 4);
    conveyor_core::check_item_fits(sizeof(T), "mailbox message");
  }

  void process_front() override {
    const arrival& a = conveyor.front();
    if (MAILROOM_UNLIKELY(concurrent_handlers)) return hand_over(a);
    scheduler::current_source = a.source;  // (sender(): the PE, over a team too)
    // The handler is inlined into this batch loop: no indirect call per message. A small one
    // runs as a local copy: the compiler then keeps what it captures by reference (the
    // addresses of the user's arrays, of the selector) in registers across the loop, where a
    // member would be reloaded after every store the handler makes (a send stores bytes, which
    // may alias the member). The copy's bytes go back after the buffer, so whatever state the
    // handler keeps (a mutable lambda's captures, a functor's members, mutable members changed
    // by a const call) goes on to the next buffer, whether or not the type can be assigned (a
    // lambda cannot): a trivially copyable object may be copied byte-wise. Randperm's handler:
    // 3% fewer instructions, selector/conveyor 1.07 -> 1.00.
    if constexpr (std::is_trivially_copyable_v<H> && std::is_copy_constructible_v<H> &&
                  sizeof(H) <= 256) {
      H h = handler_;
      run_items(h, a.begin(), a.end(), a.from, a.origins, true);
      std::memcpy(static_cast<void*>(&handler_), &h, sizeof(H));
    } else {
      run_items(handler_, a.begin(), a.end(), a.from, a.origins, true);
    }
    scheduler::current_source = -1;
    conveyor.pop_front();
  }

  // Entries [message] (Sel::stage), from this PE.
  void run_local(const stage_block& b) override {
    scheduler::current_source = self_source;
    run_items(handler_, b.data, b.data + b.used, self_from, false, false);
    scheduler::current_source = -1;
  }

  // Entries [dest][message] (Sel::stage).
  bool drain(stage_block& b, std::uint32_t& at) override {
    while (at < b.used) {
      const std::byte* e = b.data + at;
      int dest;
      std::memcpy(&dest, e, 4);
      if (!conveyor.template push<sizeof(T)>(dest, e + 4)) return false;
      at += static_cast<std::uint32_t>(4 + sizeof(T));
    }
    return true;
  }

 private:
  // Runs the handler on the items in [p, end) of an arrival from `from` (each after its origin
  // when `origins`, as node routing forwards them); `set_source`: keep sender() up to date.
  template <class Handler>
  [[gnu::always_inline]] void run_items(Handler& h, const std::byte* p, const std::byte* end,
                                        int from, bool origins, bool set_source) {
    if (MAILROOM_UNLIKELY(origins)) {
      for (; p < end; p += 4 + sizeof(T)) {
        std::uint32_t origin;
        std::memcpy(&origin, p, 4);
        T msg;
        std::memcpy(&msg, p + 4, sizeof(T));
        if (set_source) scheduler::current_source = static_cast<int>(origin);
        call_handler(h, msg, pe(static_cast<int>(origin)), *self_);
      }
      return;
    }
    const pe source(from);
    for (; p < end; p += sizeof(T)) {
      T msg;
      std::memcpy(&msg, p, sizeof(T));
      call_handler(h, msg, source, *self_);
    }
  }

  // A concurrent mailbox's arrival: its items are copied out and handled by a task, which any
  // worker may run (termination waits for it: a handler's task). The buffer goes back at once.
  [[gnu::noinline]] void hand_over(const arrival& a) {
    const auto bytes = static_cast<std::size_t>(a.end() - a.begin());
    std::unique_ptr<std::byte[]> items(new std::byte[bytes]);
    std::memcpy(items.get(), a.begin(), bytes);
    in_hands.fetch_add(1, std::memory_order_relaxed);
    auto* t = new task;
    t->fn = callback(
        [this, items = std::move(items), bytes, from = a.from, origins = a.origins]() mutable {
          run_items(handler_, items.get(), items.get() + bytes, from, origins, false);
          items.reset();
          in_hands.fetch_sub(1, std::memory_order_release);
        });
    spawn(t);
    conveyor.pop_front();
  }

  H handler_;
  Sel* self_;
};

// What sends to a mailbox of variable-size messages need of it.
struct var_sends {
  /// The largest payload, in bytes, that one item carries (larger messages go in pieces).
  std::size_t room = 0;
  /// Numbers the large messages this PE sends to the mailbox (their pieces name them by it).
  std::atomic<std::uint64_t> next_large{0};
};

// A byte buffer for a send that builds its message first (a serialised value, the pieces of a
// large one): one per nesting level (a blocked send may run a handler that sends in turn), kept
// for reuse, so no allocation per message once warm.
struct scratch {
  scratch() : bytes(take()) {}
  ~scratch() { --depth(); }
  scratch(const scratch&) = delete;
  scratch& operator=(const scratch&) = delete;
  std::vector<std::byte>& bytes;

 private:
  static std::size_t& depth() noexcept {
    thread_local std::size_t d = 0;
    return d;
  }
  static std::vector<std::byte>& take() {
    thread_local std::vector<std::unique_ptr<std::vector<std::byte>>> kept;
    std::size_t& d = depth();
    if (d == kept.size()) kept.push_back(std::make_unique<std::vector<std::byte>>());
    std::vector<std::byte>& b = *kept[d++];
    b.clear();
    return b;
  }
};

// A mailbox of variable-size messages: items [len][0][payload, padded to 8] (conveyor_core::
// push_var), after their origin when forwarded. A message larger than a buffer comes in pieces
// (len has k_var_piece), each [seq][total][offset][bytes], reassembled here before its handler
// runs (selector::send_large).
template <class U, class H, class Sel>
class mailbox_impl<mailbox_spec<span_of<U>, H>, Sel> : public mailbox_base {
 public:
  mailbox_impl(mailbox_spec<span_of<U>, H>&& spec, Sel* self, std::uint32_t signature,
               const team_lanes* team)
      : mailbox_base(false, signature, 0, team), handler_(std::move(spec.handler)), self_(self) {
    name = spec.name;
    MAILROOM_CHECK(!spec.concurrent,
                   "a mailbox of variable-size messages cannot have concurrent "
                   "handlers (yet)");
    var.room = conveyor.var_room();
  }
  ~mailbox_impl() override {
    MAILROOM_CHECK(partial_.empty(),
                   "a mailbox of variable-size messages ends with {} large "
                   "message(s) partly arrived",
                   partial_.size());
  }

  void process_front() override {
    const arrival& a = conveyor.front();
    const std::byte* p = a.begin();
    const std::byte* end = a.end();
    if (MAILROOM_UNLIKELY(a.origins)) {
      while (p < end) {
        std::uint32_t origin;
        std::memcpy(&origin, p, 4);
        scheduler::current_source = static_cast<int>(origin);
        p = run_one(p + 4, pe(static_cast<int>(origin)));
      }
    } else {
      scheduler::current_source = a.source;
      const pe from(a.from);
      while (p < end) p = run_one(p, from);
    }
    scheduler::current_source = -1;
    conveyor.pop_front();
  }

  // Entries [len][0][payload] (Sel::stage_var), from this PE.
  void run_local(const stage_block& b) override {
    scheduler::current_source = self_source;
    const pe from(self_from);
    for (const std::byte* p = b.data; p < b.data + b.used;) p = run_one(p, from);
    scheduler::current_source = -1;
  }

  // Entries [dest][0][len][0][payload] (Sel::stage_var).
  bool drain(stage_block& b, std::uint32_t& at) override {
    while (at < b.used) {
      const std::byte* e = b.data + at;
      int dest;
      std::uint32_t len;
      std::memcpy(&dest, e, 4);
      std::memcpy(&len, e + 8, 4);
      if (!conveyor.push_var(dest, e + 16, len)) return false;
      at += static_cast<std::uint32_t>(8 + conveyor_core::var_item_bytes(len));
    }
    return true;
  }

  var_sends var;

 private:
  // Runs the handler on the item at p ([len][0][payload]); returns the next item.
  const std::byte* run_one(const std::byte* p, pe from) {
    std::uint32_t word;
    std::memcpy(&word, p, 4);
    const std::uint32_t len = word & conveyor_core::k_var_len;
    const std::byte* payload = p + 8;
    if (MAILROOM_UNLIKELY(word & conveyor_core::k_var_piece)) {
      piece(payload, len, from);
    } else if (MAILROOM_LIKELY(reinterpret_cast<std::uintptr_t>(payload) % alignof(U) == 0)) {
      call(payload, len, from);
    } else {
      // (A routing prefix of 4 bytes left it misaligned for U: handled from an aligned copy.)
      thread_local std::vector<std::uint64_t> aligned;
      aligned.resize((len + 7) / 8);
      std::memcpy(aligned.data(), payload, len);
      call(aligned.data(), len, from);
    }
    return p + conveyor_core::var_item_bytes(len);
  }
  void call(const void* payload, std::size_t len, pe from) {
    static_assert(alignof(U) <= alignof(std::uint64_t),
                  "span_of<T>: T aligned beyond 8 bytes is not supported");
    call_handler(
        handler_,
        std::span<const U>(std::launder(reinterpret_cast<const U*>(payload)), len / sizeof(U)),
        from, *self_);
  }
  // A piece [seq][total][offset][bytes] of a large message from `from`: copied into place; the
  // handler runs on the whole once every byte has arrived (pieces may come in any order).
  [[gnu::cold, gnu::noinline]] void piece(const std::byte* payload, std::uint32_t len, pe from) {
    std::uint64_t head[3];
    std::memcpy(head, payload, sizeof head);
    const std::size_t bytes = len - sizeof head;
    MAILROOM_ASSERT(len >= sizeof head && head[2] + bytes <= head[1]);
    const auto key = std::make_pair(from.rank(), head[0]);
    auto it = partial_.find(key);
    if (it == partial_.end()) {
      it = partial_.emplace(key, large{}).first;
      it->second.words.resize((head[1] + 7) / 8);
    }
    large& m = it->second;
    std::memcpy(reinterpret_cast<std::byte*>(m.words.data()) + head[2], payload + sizeof head,
                bytes);
    m.arrived += bytes;
    if (m.arrived < head[1]) return;
    const large whole = std::move(m);
    partial_.erase(it);
    call(whole.words.data(), head[1], from);
  }

  struct large {
    std::vector<std::uint64_t> words;
    std::uint64_t arrived = 0;
  };
  H handler_;
  Sel* self_;
  std::map<std::pair<int, std::uint64_t>, large> partial_;  ///< large messages partly arrived
};

// A mailbox of serialised messages: a mailbox of bytes whose handler decodes them first.
template <class T, class H, class Sel>
class mailbox_impl<mailbox_spec<serialized<T>, H>, Sel> final
    : public mailbox_impl<mailbox_spec<span_of<std::byte>, decoding_handler<T, H, Sel>>, Sel> {
 public:
  mailbox_impl(mailbox_spec<serialized<T>, H>&& spec, Sel* self, std::uint32_t signature,
               const team_lanes* team)
      : mailbox_impl<mailbox_spec<span_of<std::byte>, decoding_handler<T, H, Sel>>, Sel>(
            {decoding_handler<T, H, Sel>{std::move(spec.handler)}, spec.concurrent, spec.name},
            self, signature, team) {}
};

template <class Sel>
class mailbox_impl<lambdas, Sel> final : public mailbox_base {
 public:
  mailbox_impl(lambdas&& spec, Sel* self, std::uint32_t signature, const team_lanes* team)
      : mailbox_base(true, signature, 0, team), self_(self) {
    name = spec.name;
    conveyor.set_record_bytes(&lambda_record_bytes);
  }

  void process_front() override {
    const arrival& a = conveyor.front();
    const std::byte* end = a.end();
    if (MAILROOM_UNLIKELY(a.origins)) {
      // Forwarded (node routing): runs [id][count] of whole records [dest][origin][closure].
      for (const std::byte* p = a.begin(); p < end;) {
        std::uint32_t head[2];
        std::memcpy(head, p, sizeof head);
        p += 8;
        const std::size_t stride = 8 + lambda_record_bytes(head[0]);
        for (std::uint32_t r = 0; r < head[1]; ++r, p += stride) {
          std::uint32_t origin;
          std::memcpy(&origin, p + 4, 4);
          scheduler::current_source = static_cast<int>(origin);
          g_lambda_table[head[0]]->invoke_one(p + 8, pe(static_cast<int>(origin)), self_);
        }
      }
      scheduler::current_source = -1;
      conveyor.pop_front();
      return;
    }
    scheduler::current_source = a.source;  // (sender(): the PE, over a team too)
    const pe from(a.from);
    // Runs of same-type closures: one indirect call per run.
    for (const std::byte* p = a.begin(); p < end;) {
      std::uint32_t id;
      std::memcpy(&id, p, sizeof id);
      MAILROOM_ASSERT(id < g_lambda_count);
      p = g_lambda_table[id]->invoke_run(p, from, self_);
    }
    scheduler::current_source = -1;
    conveyor.pop_front();
  }

  // Runs [stride][count][invoke][closures] (Sel::stage_lambda), from this PE: invoke is the
  // closure type's, one indirect call per run.
  void run_local(const stage_block& b) override {
    scheduler::current_source = self_source;
    const pe from(self_from);
    for (std::uint32_t at = 0; at < b.used;) {
      const std::byte* e = b.data + at;
      std::uint32_t head[2];
      std::memcpy(head, e, sizeof head);
      void (*invoke)(const std::byte*, std::uint32_t, std::uint32_t, pe, void*) noexcept;
      std::memcpy(&invoke, e + 8, sizeof invoke);
      invoke(e + 16, head[1], head[0], from, self_);
      at += 16 + head[0] * head[1];
    }
    scheduler::current_source = -1;
  }

  // Entries [dest][bytes][push][closure] (Sel::stage_lambda): push is the closure type's.
  bool drain(stage_block& b, std::uint32_t& at) override {
    while (at < b.used) {
      const std::byte* e = b.data + at;
      std::uint32_t head[2];
      std::memcpy(head, e, sizeof head);
      bool (*push)(conveyor_core&, int, const void*);
      std::memcpy(&push, e + 8, sizeof push);
      if (!push(conveyor, static_cast<int>(head[0]), e + 16)) return false;
      at += head[1];
    }
    return true;
  }

 private:
  Sel* self_;
};

/// What a bound send (selector::bind) carries: the handler, then the item, called as
/// fn(item, from, self), fn(item, from) or fn(item), the first the handler takes.
template <class H, class T, class Sel>
struct bound_message {
  [[no_unique_address]] H fn;
  T item;
  void operator()(pe from, Sel& self) const
    requires std::is_invocable_v<const H&, const T&, pe, Sel&>
  {
    fn(item, from, self);
  }
  void operator()(pe from) const
    requires(!std::is_invocable_v<const H&, const T&, pe, Sel&> &&
             std::is_invocable_v<const H&, const T&, pe>)
  {
    fn(item, from);
  }
  void operator()() const
    requires(!std::is_invocable_v<const H&, const T&, pe, Sel&> &&
             !std::is_invocable_v<const H&, const T&, pe> &&
             std::is_invocable_v<const H&, const T&>)
  {
    fn(item);
  }
};

/// The item type of a bound handler: its first parameter, when its call operator is not a
/// template (void otherwise: the caller names it).
template <class F>
struct first_parameter {
  using type = void;
};
template <class C, class R, class A, class... Rest>
struct first_parameter<R (C::*)(A, Rest...) const> {
  using type = std::remove_cvref_t<A>;
};
template <class C, class R, class A, class... Rest>
struct first_parameter<R (C::*)(A, Rest...) const noexcept> {
  using type = std::remove_cvref_t<A>;
};
template <class H>
struct handler_item {
  using type = void;
};
template <class H>
  requires requires { &H::operator(); }
struct handler_item<H> {
  using type = typename first_parameter<decltype(&H::operator())>::type;
};

}  // namespace detail

template <class Sel>
class selector_ref;

/// A selector with one mailbox per Spec (mailbox_spec<T, H> or lambdas). Construction is
/// collective: every PE constructs its selectors in the same order (messages that arrive before
/// the local constructor ran are kept). Termination follows the dependency graph (default: the
/// chain 0 -> 1 -> ... -> N-1): call done<I>() on the entry mailboxes, then wait().
///
/// Over a team (a row or a column of a grid, say), only its members construct it, in the same
/// order among the selectors over that team; its mailboxes are partitioned over the members,
/// addressed by rank in the team (send(pe(r), ...) goes to member r, and a handler's `from` is
/// the sender's rank there), and it terminates among them.
template <class... Specs>
class selector {
  static_assert(sizeof...(Specs) > 0, "selector: give at least one mailbox");

 public:
  /// The number of mailboxes.
  static constexpr std::size_t size = sizeof...(Specs);

  /// Over the job's PEs, with the default termination graph (the chain). Collective; the
  /// runtime must be running.
  explicit selector(Specs... specs, source_location loc = source_location::current())
      : selector(graph::chain(static_cast<int>(size)), std::move(specs)..., loc) {}

  /// Over the job's PEs, with termination graph g: an edge X -> Y where X's handlers send to Y.
  // (The call site goes to functions out of line: a call_site object here, inlined into the
  // function that sends, cost the send loop of index-gather an instruction per message.)
  selector(const graph& g, Specs... specs, source_location loc = source_location::current()) {
    detail::scheduler::check_running("mailroom::selector", loc);
    pes_ = num_pes();
    build(std::index_sequence_for<Specs...>{}, loc, std::move(specs)...);
    core_ = std::make_unique<detail::selector_core>(boxes_list(std::index_sequence_for<Specs...>{}),
                                                    g, "selector", loc);
    core_->set_owner(this);
  }

  /// Over team t (collective over its members; the world team gives the job's selector).
  selector(const team& t, Specs... specs, source_location loc = source_location::current())
      : selector(t, graph::chain(static_cast<int>(size)), std::move(specs)..., loc) {}

  /// Over team t, with termination graph g.
  selector(const team& t, const graph& g, Specs... specs,
           source_location loc = source_location::current()) {
    detail::scheduler::check_running("mailroom::selector", loc);
    pes_ = num_pes();
    if (detail::over_world(t)) {
      build(std::index_sequence_for<Specs...>{}, loc, std::move(specs)...);
      core_ = std::make_unique<detail::selector_core>(
          boxes_list(std::index_sequence_for<Specs...>{}), g, "selector", loc);
    } else {
      team_.emplace(t);
      build(std::index_sequence_for<Specs...>{}, loc, std::move(specs)...);
      core_ = std::make_unique<detail::selector_core>(
          boxes_list(std::index_sequence_for<Specs...>{}), g, "selector", loc, &*team_);
      pes_ = t.size();
    }
    core_->set_owner(this);
  }

  selector(const selector&) = delete;
  selector& operator=(const selector&) = delete;
  /// Ends this PE's stream to every entry not yet done, and waits for termination.
  ~selector() { core_.reset(); }

 private:
  struct no_such_mailbox {
    using message_type = no_such_mailbox;
  };
  // Out-of-range indices map to a placeholder, so that the static_assert below speaks instead
  // of an error deep inside std::tuple_element.
  template <std::size_t I>
  using spec_at = typename std::conditional_t<(I < sizeof...(Specs)),
                                              std::tuple_element<I, std::tuple<Specs...>>,
                                              std::type_identity<no_such_mailbox>>::type;

 public:
  /// The message type of mailbox I: T for mailbox_spec<T, H> (span_of<T> and serialized<T>
  /// as given), void for lambdas.
  template <std::size_t I>
  using message_type = typename spec_at<I>::message_type;

  /// Sends a typed message to mailbox I on PE `dest`. When `dest` has acknowledged too few
  /// buffers, runs pending handlers until it has (from inside a handler it never blocks). So
  /// from user code a send may run handlers: state they change may change under a send loop.
  template <std::size_t I>
    requires(I < size && !std::is_void_v<message_type<I>> && !detail::is_span_of<message_type<I>> &&
             !detail::is_serialized<message_type<I>>)
  void send(pe dest, const message_type<I>& msg, source_location loc = source_location::current()) {
    auto& box = *std::get<I>(boxes_);
    if (MAILROOM_UNLIKELY(!admitted(box, dest))) return stage(box, I, dest.rank(), msg, loc);
    if (MAILROOM_UNLIKELY(!box.conveyor.template push<sizeof(message_type<I>)>(dest.rank(), &msg)))
      push_blocked(box.conveyor, dest.rank(), msg);
  }

  /// Sends a variable-size message to mailbox I (of span_of<T>) on PE `dest`: the items are
  /// copied out at once. One of at most var_room<I>() bytes is aggregated with the others; a
  /// larger one goes in pieces, each in a buffer, and its handler runs once all have arrived.
  /// Blocks as the typed send does.
  template <std::size_t I>
    requires(I < size && detail::is_span_of<message_type<I>>)
  void send(pe dest, std::span<const typename message_type<I>::value_type> items,
            source_location loc = source_location::current()) {
    auto& box = *std::get<I>(boxes_);
    send_var(box, box.var, I, dest, items.data(), items.size_bytes(), loc);
  }
  /// Sends `value` to mailbox I (of serialized<T>) on PE `dest`: serialised at once (cereal's
  /// binary archive), then sent as a variable-size message of its bytes.
  template <std::size_t I>
    requires(I < size && detail::is_serialized<message_type<I>>)
  void send(pe dest, const typename message_type<I>::value_type& value,
            source_location loc = source_location::current()) {
    const detail::scratch s;
    message_type<I>::encode(value, s.bytes);
    auto& box = *std::get<I>(boxes_);
    send_var(box, box.var, I, dest, s.bytes.data(), s.bytes.size(), loc);
  }
  /// The most bytes one message to variable-size mailbox I carries in one piece (what a buffer
  /// holds after its headers): larger ones go in pieces.
  template <std::size_t I>
    requires(I < size &&
             (detail::is_span_of<message_type<I>> || detail::is_serialized<message_type<I>>))
  [[nodiscard]] std::size_t var_room() const noexcept {
    return std::get<I>(boxes_)->var.room;
  }

  /// Sends a closure to lambda mailbox I on PE `dest`, where it is called once, as
  /// closure(from, self), closure(from) or closure(), the first it takes (like a handler:
  /// from is the sending PE, self this selector there). The closure must be trivially
  /// copyable: it travels by value with a compile-time handler id.
  template <std::size_t I, class L>
    requires(I < size && std::is_void_v<message_type<I>>)
  [[gnu::always_inline]] void send(pe dest, const L& closure,
                                   source_location loc = source_location::current()) {
    static_assert(std::is_trivially_copyable_v<L>,
                  "lambda message must be trivially copyable: capture by value only plain data, "
                  "pointers into symmetric memory (symmetric_array) and mailroom handles; not "
                  "std::vector, std::string, std::function or anything owning");
    static_assert(std::is_class_v<L>,
                  "lambda message must be a lambda or function object, not a function pointer: "
                  "code addresses differ from one PE to another");
    static_assert(detail::lambda_callable<L, selector>,
                  "lambda message must be callable as [=] { ... }, [=](mailroom::pe from) { ... } "
                  "or [=](mailroom::pe from, auto& self) { ... }");
    static_assert(sizeof(L) <= 4096, "lambda message larger than 4 KiB: capture less");
    using owner = detail::lambda_owner<L, selector>;
    static_cast<void>(&detail::lambda_registered<L, owner>);  // registers L at static init
    auto& box = *std::get<I>(boxes_);
    if (MAILROOM_UNLIKELY(!admitted(box, dest)))
      return stage_lambda(box, I, dest.rank(), closure, loc);
    // The id by reference: the conveyor tells runs apart by its address (no load per send).
    static_assert(alignof(detail::lambda_entry) % detail::conveyor_core::k_tag_align == 0 &&
                  offsetof(detail::lambda_entry, wire_id) == 0);
    const std::uint32_t& id = detail::lambda_entry_of<L, owner>.wire_id;
    constexpr std::size_t W = detail::lambda_words<L>;
    if constexpr (detail::lambda_delta_coded<L> && sizeof(L) == W * 8 &&
                  !detail::lambda_padded<L>) {
      // The closure's own bytes are its words.
      if (MAILROOM_UNLIKELY(!box.conveyor.template push_delta<W>(dest.rank(), id, &closure)))
        push_delta_blocked<W>(box.conveyor, dest.rank(), id, &closure);
    } else if constexpr (detail::lambda_delta_coded<L>) {
      alignas(L) alignas(8) std::byte words[W * 8];
      detail::closure_words(closure, words);
      if (MAILROOM_UNLIKELY(!box.conveyor.template push_delta<W>(dest.rank(), id, words)))
        push_delta_blocked<W>(box.conveyor, dest.rank(), id, words);
    } else {
      if (MAILROOM_UNLIKELY(
              !box.conveyor.template push_whole<W * 8, sizeof(L)>(dest.rank(), id, &closure)))
        push_whole_blocked(box.conveyor, dest.rank(), id, closure);
    }
  }

  /// The sends of selector::bind: copyable, cheap to keep for a send loop.
  template <std::size_t I, class T, class H>
  class bound_sender {
    using M = detail::bound_message<H, T, selector>;
    using owner = detail::lambda_owner<M, selector>;
    using core = detail::conveyor_core;
    static constexpr std::size_t Wc = std::is_empty_v<H> ? 0 : sizeof(H) / 8;
    static constexpr std::size_t Wl = detail::lambda_words<T>;
    // A handler of whole 8-byte words (or none), and at most 16 words with the item: pushed as
    // one run per sender (conveyor_core::push_bound). Otherwise sent as send<I> would.
    static constexpr bool k_bound =
        (std::is_empty_v<H> || (sizeof(H) % 8 == 0 && alignof(H) <= 8)) && alignof(T) <= 8 &&
        detail::lambda_delta_coded<M> && detail::lambda_words<M> == Wc + Wl;

   public:
    /// Sends `item` to mailbox I on PE `dest`, where the handler is called with it. As
    /// `selector::send<I>` otherwise: it may run handlers while `dest` has too few credits, and
    /// from a pool worker it is staged.
    [[gnu::always_inline]] void send(pe dest, const T& item,
                                     source_location loc = source_location::current()) {
      if constexpr (k_bound) {
        static_cast<void>(&detail::lambda_registered<M, owner>);  // registers M at static init
        auto& box = *std::get<I>(sel_->boxes_);
        if (MAILROOM_UNLIKELY(!sel_->admitted(box, dest)))
          return sel_->stage_lambda(box, I, dest.rank(), M{h_, item}, loc);
        // The id by reference (read on slow paths only); the key and the selector are members
        // that no call sees, so the send loop keeps them in registers.
        const std::uint32_t& id = detail::lambda_entry_of<M, owner>.wire_id;
        if constexpr (sizeof(T) == Wl * 8 && !detail::lambda_padded<T>) {
          if (MAILROOM_UNLIKELY(
                  !box.conveyor.template push_bound<Wc, Wl>(dest.rank(), key_, id, words_, &item)))
            blocked(box.conveyor, dest.rank(), id, &item);
        } else {
          alignas(T) alignas(8) std::byte words[Wl * 8];
          detail::closure_words(item, words);
          if (MAILROOM_UNLIKELY(
                  !box.conveyor.template push_bound<Wc, Wl>(dest.rank(), key_, id, words_, words)))
            blocked(box.conveyor, dest.rank(), id, words);
        }
      } else {
        sel_->template send<I>(dest, M{h_, item}, loc);
      }
    }
    /// The handler.
    [[nodiscard]] const H& handler() const noexcept { return h_; }

   private:
    friend class selector;
    bound_sender(selector& sel, const H& h) : sel_(&sel), h_(h) {
      if constexpr (k_bound) {
        key_ = core::next_bound_key();
        if constexpr (Wc > 0) detail::closure_words(h_, words_);
      }
    }
    // A send blocked on credits: its words copied into one record (the item's as scalars when
    // few), so that the fast path need not keep the item, or this sender, in memory.
    [[gnu::always_inline]] void blocked(core& c, int dest, const std::uint32_t& id,
                                        const void* varying) {
      if constexpr (Wl <= core::k_unrolled_delta_words)
        core::with_words<Wl>(varying, [&](auto... w) {
          blocked_record(c, dest, id, core::bound_record<Wc, Wl>(key_, words_, w...));
        });
      else
        blocked_record(c, dest, id, core::bound_record<Wc, Wl>(key_, words_, varying));
    }
    [[gnu::noinline]] static void blocked_record(core& c, int dest, const std::uint32_t& id,
                                                 const core::bound_record<Wc, Wl>& r) {
      const detail::credit_wait timer(c);
      do detail::scheduler::progress_blocked();
      while (!c.template push_bound<Wc, Wl>(dest, r.key, id, r.words.data(), r.words.data() + Wc));
    }
    selector* sel_;
    std::uintptr_t key_ = 0;
    [[no_unique_address]] H h_;
    alignas(8) std::byte words_[Wc > 0 ? Wc * 8 : 8] = {};  // h_'s words
  };

  /// Messages to lambda mailbox I that are all handled by `handler`, each with its own item: a
  /// typed mailbox made where the sends are. `auto inc = sel.bind<I>([counts](std::int64_t
  /// slot) { counts[slot] += 1; });` then `inc.send(dest, slot)`. The handler is called on the
  /// owner as handler(item, from, self), handler(item, from) or handler(item), the first it
  /// takes (as a typed handler is); T is its first parameter's type unless given (it must be,
  /// for a generic lambda: `sel.bind<I, T>(...)`). Its captures (the arrays, the constants every
  /// message uses) cross the wire once per run of messages, the items once each, and the
  /// sender compares nothing per message: as fast as a typed send, when the handler's captures
  /// are whole 8-byte words and handler and item together at most 16 words (otherwise sent as
  /// `send<I>` would). Handler and item must be trivially copyable; the selector must outlive
  /// the sender.
  template <std::size_t I, class T = void, class H>
    requires(I < size && std::is_void_v<message_type<I>>)
  [[nodiscard]] auto bind(const H& handler) {
    using Item = std::conditional_t<std::is_void_v<T>, typename detail::handler_item<H>::type, T>;
    static_assert(!std::is_void_v<Item>,
                  "bind: name the item type (sel.bind<I, T>(handler)): it cannot be deduced from a "
                  "handler whose call operator is a template (auto parameters)");
    static_assert(std::is_class_v<H>,
                  "bind: the handler must be a lambda or function object, not a function pointer: "
                  "code addresses differ from one PE to another");
    if constexpr (!std::is_void_v<Item> && std::is_class_v<H>) {
      using M = detail::bound_message<H, Item, selector>;
      static_assert(std::is_trivially_copyable_v<H>,
                    "bind: the handler must be trivially copyable: capture by value only plain "
                    "data, pointers into symmetric memory (symmetric_array) and mailroom handles");
      static_assert(std::is_trivially_copyable_v<Item>,
                    "bind: the item must be trivially copyable (it travels by value)");
      static_assert(detail::lambda_callable<M, selector>,
                    "bind: the handler must be callable as (T item), (T item, mailroom::pe from) "
                    "or (T item, mailroom::pe from, auto& self)");
      static_assert(sizeof(M) <= 4096, "bind: handler and item larger than 4 KiB: capture less");
      return bound_sender<I, Item, H>(*this, handler);
    }
  }

  /// A mailbox index I out of range: a compile-time error that says so (not a failed overload).
  template <std::size_t I, class M>
    requires(I >= size)
  void send(pe, const M&) {
    static_assert(I < size, "selector::send<I>: mailbox index out of range");
  }

  /// send<I>(dest, msg) spelt `send(mailroom::to<I>, dest, msg)`: in a generic handler, where
  /// `self` is a template parameter, this needs no `template` keyword
  /// (`self.send(mr::to<1>, from, reply)` instead of `self.template send<1>(from, reply)`).
  template <std::size_t I, class M>
  [[gnu::always_inline]] void send(mailbox_id<I>, pe dest, const M& msg,
                                   source_location loc = source_location::current()) {
    static_assert(I < size, "selector::send(to<I>, ...): mailbox index out of range");
    if constexpr (detail::is_span_of<message_type<I>>)
      send<I>(dest, std::span<const typename message_type<I>::value_type>(msg), loc);
    else
      send<I>(dest, msg, loc);
  }

  /// This PE sends no more to entry mailbox I from outside the selector's handlers.
  template <std::size_t I>
  void done(source_location loc = source_location::current()) {
    static_assert(I < size, "selector::done<I>: mailbox index out of range");
    core_->done(static_cast<int>(I), loc);
  }
  /// done() with a run-time mailbox id (checked).
  void done(int mailbox_id, source_location loc = source_location::current()) {
    core_->done(mailbox_id, loc);
  }

  /// Names the selector on this PE, for errors, the watchdog's reports and statistics
  /// ("selector 'bfs' #3"); name its mailboxes with mailbox_spec::named.
  void name(std::string_view n) { core_->set_name(n); }

  /// Sends every partly filled buffer of this selector now: latency over aggregation (e.g.
  /// before yield()ing for a reply). Sending continues normally afterwards.
  void flush() {
    if (detail::t_worker > 0) detail::check_runtime_thread("selector::flush");
    [this]<std::size_t... I>(std::index_sequence<I...>) {
      (std::get<I>(boxes_)->conveyor.flush(true), ...);
    }(std::index_sequence_for<Specs...>{});
  }

  /// Runs handlers until every mailbox of this selector has terminated on this PE: every
  /// message destined here has been handled and this PE will receive no more.
  void wait(source_location loc = source_location::current()) { core_->wait(loc); }

  /// A trivially copyable handle that lambda messages may capture to reach this selector on
  /// whichever PE they run.
  [[nodiscard]] selector_ref<selector> ref() const noexcept {
    return selector_ref<selector>(core_->id());
  }

  /// Gives mailbox I a priority (default 0, may be negative): of the mailboxes of this PE's live
  /// selectors that have arrivals when the progress engine polls, higher priorities are handled
  /// first (equal ones in construction order). Each poll still handles every mailbox's arrivals
  /// of that moment, so a low priority delays, never starves. Local to this PE; while no
  /// mailbox has a priority, polls run as without them.
  template <std::size_t I>
  void priority(int p) {
    static_assert(I < size, "selector::priority<I>: mailbox index out of range");
    core_->set_priority(static_cast<int>(I), p);
  }

  /// Disables mailbox I on this PE: its handlers run no more (from the next buffer on) until
  /// enable<I>(); what arrives for it meanwhile waits, unacknowledged, so back-pressure reaches
  /// its senders, whose sends to this PE then wait as they do for a slow receiver, while the
  /// other mailboxes go on (each keeps its own buffers on every link). It does not terminate on
  /// this PE while disabled: wait() waits for enable(), which a handler may call, and the
  /// watchdog names a mailbox disabled at a wait that stalls. Local to this PE; from the
  /// runtime's thread (user code or handlers, not pool workers).
  template <std::size_t I>
  void disable() {
    static_assert(I < size, "selector::disable<I>: mailbox index out of range");
    core_->set_enabled(static_cast<int>(I), false);
  }
  /// Enables mailbox I again on this PE: its waiting arrivals are handled from the next poll.
  template <std::size_t I>
  void enable() {
    static_assert(I < size, "selector::enable<I>: mailbox index out of range");
    core_->set_enabled(static_cast<int>(I), true);
  }
  /// Whether mailbox I is enabled on this PE (mailboxes start enabled).
  template <std::size_t I>
  [[nodiscard]] bool enabled() const {
    static_assert(I < size, "selector::enabled<I>: mailbox index out of range");
    return core_->enabled(static_cast<int>(I));
  }

  /// Declares that the handlers of `upstream` (a selector or an actor) send to this selector's
  /// mailboxes: an edge between selectors in the termination graph. This selector then
  /// terminates after upstream, whatever order done() and wait() are called in: its mailboxes
  /// close once this PE has called their done() and upstream has terminated here. Call it on
  /// every PE, after constructing both and before any done() or send between them. Selectors
  /// that feed each other around a cycle (a.receives_from(b) and b.receives_from(a), or a longer
  /// loop) terminate together, by quiescence, once the entries of all of them are done: the
  /// declaration that closes the cycle is then collective (every PE makes it in the same order
  /// among its constructions of selectors), and a wait() on any of them waits for all. Cycles
  /// through a selector over a team are refused.
  template <class S>
  void receives_from(const S& upstream, source_location loc = source_location::current()) {
    core_->receives_from(upstream.ref().id(), loc);
  }

  /// Whether every mailbox has terminated on this PE, as wait() would return (runs no handlers).
  [[nodiscard]] bool finished() const noexcept { return core_->finished(); }
  /// A future that is ready once the selector has terminated on this PE (finished()), so that
  /// user code can wait on it beside other futures (when_all). Waiting on it runs the progress
  /// engine as wait() does; unlike wait(), it does not check that done() was called first.
  [[nodiscard]] future<void> finished_future() const { return core_->finished_future(); }

 private:
  template <std::size_t... I>
  void build(std::index_sequence<I...>, const source_location& loc, Specs&&... specs) {
    // A comma fold runs left to right: mailboxes take their collective ids in index order.
    // (Their signature names the construction site too: two selectors of one type constructed
    // in different orders on different PEs are told apart.)
    const std::uint32_t signature =
        detail::construction_signature(detail::type_signature<selector, detail::spec_box<Specs>...>,
                                       loc, {specs.name...}, {detail::handler_origin(specs)...});
    // Over a team, each takes the team's next mailbox number, in index order.
    std::array<detail::team_lanes, sizeof...(Specs)> lanes{};
    if (team_)
      for (auto& l : lanes) l = detail::next_team_mailbox(*team_);
    ((std::get<I>(boxes_) = std::make_unique<detail::mailbox_impl<Specs, selector>>(
          std::move(specs), this, signature + static_cast<std::uint32_t>(I),
          team_ ? &lanes[I] : nullptr)),
     ...);
  }
  template <std::size_t... I>
  std::vector<detail::mailbox_base*> boxes_list(std::index_sequence<I...>) {
    return {std::get<I>(boxes_).get()...};
  }
  // The slow paths of send: the buffer for dest is full and cannot be shipped yet. They run
  // progress until the push goes through, out of line and with the message by value, so that
  // the fast path keeps nothing alive for them (no spills in a send loop).
  template <class T>
  [[gnu::noinline]] static void push_blocked(detail::conveyor_core& c, int dest, T msg) {
    const detail::credit_wait timer(c);
    do detail::scheduler::progress_blocked();
    while (!c.template push<sizeof(T)>(dest, &msg));
  }
  // A small record's words are passed on as scalars: one that the compiler keeps in registers
  // is then not built in memory (or in vector registers) on the fast path for this call, as it
  // may be when the call takes the record whole (see docs/design.md).
  template <std::size_t W>
  [[gnu::always_inline]] static void push_delta_blocked(detail::conveyor_core& c, int dest,
                                                        const std::uint32_t& id,
                                                        const void* words) {
    using detail::conveyor_core;
    if constexpr (W <= conveyor_core::k_unrolled_delta_words)
      conveyor_core::with_words<W>(
          words, [&](auto... w) { push_delta_blocked_words<W>(c, dest, id, w...); });
    else
      push_delta_blocked_record<W>(c, dest, id, conveyor_core::words_of<W>(words));
  }
  template <std::size_t W, class... Word>
  [[gnu::noinline]] static void push_delta_blocked_words(detail::conveyor_core& c, int dest,
                                                         const std::uint32_t& id, Word... w) {
    push_delta_blocked_record<W>(c, dest, id, detail::conveyor_core::record_words<W>{w...});
  }
  template <std::size_t W>
  [[gnu::noinline]] static void push_delta_blocked_record(
      detail::conveyor_core& c, int dest, const std::uint32_t& id,
      detail::conveyor_core::record_words<W> words) {
    const detail::credit_wait timer(c);
    do detail::scheduler::progress_blocked();
    while (!c.template push_delta<W>(dest, id, words.data()));
  }
  template <class L>
  [[gnu::noinline]] static void push_whole_blocked(detail::conveyor_core& c, int dest,
                                                   const std::uint32_t& id, L closure) {
    constexpr std::size_t W = detail::lambda_words<L>;
    const detail::credit_wait timer(c);
    do detail::scheduler::progress_blocked();
    while (!c.template push_whole<W * 8, sizeof(L)>(dest, id, &closure));
  }
  // Whether this send is pushed now: the mailbox takes sends from here (worker 0's user code or
  // handlers) and dest is in range. The rest goes to the cold path (stage or stage_lambda),
  // which returns only for a pool worker's send, staged there. (A slow path that returned a
  // verdict to the send instead made GCC lay out the send loop of histogram with two taken
  // branches per message, at twice the time per message.)
  [[gnu::always_inline]] bool admitted(const detail::mailbox_base& box, pe dest) const {
    const bool open =
        (box.accepts.load(std::memory_order_relaxed) & detail::scheduler::sending_from) != 0;
    return MAILROOM_LIKELY(open &&
                           static_cast<unsigned>(dest.rank()) < static_cast<unsigned>(pes_));
  }
  // Whether a send that admitted() refused is a pool worker's that the mailbox takes: as worker
  // 0's of the same kind would be. Inline (a call per send was 10% of a pool worker's time).
  [[gnu::always_inline]] bool pool_admitted(const detail::mailbox_base& box, int dest) const {
    using detail::scheduler;
    const std::uint8_t from = scheduler::sending_from;
    return (from & (scheduler::k_from_worker_user | scheduler::k_from_worker_handler)) != 0 &&
           static_cast<unsigned>(dest) < static_cast<unsigned>(pes_) &&
           (box.accepts.load(std::memory_order_relaxed) & (from >> 2)) != 0;
  }
  // A send that admitted() refused: stops the job with the reason, unless it is a pool worker's
  // send that the mailbox takes, which goes into this worker's staging block for the mailbox
  // (worker 0 drains it into the aggregation buffers). The message by value: a reference would
  // make the send loop build every closure on the stack (histogram lambda: 5.4 -> 11 ns).
  // A send that the mailbox does not take here: stops the job, naming the caller's line.
  [[noreturn, gnu::cold, gnu::noinline]] void refuse(std::size_t i, int dest,
                                                     source_location loc) const {
    const detail::call_site here(loc);
    core_->refuse_send(static_cast<int>(i), dest);
  }
  template <class T>
  [[gnu::cold, gnu::noinline]] void stage(detail::mailbox_base& box, std::size_t i, int dest, T msg,
                                          source_location loc) const {
    if (MAILROOM_UNLIKELY(!pool_admitted(box, dest))) refuse(i, dest, loc);
    if (dest == box.self_from) {  // handled from the block, by any worker (no conveyor)
      std::memcpy(box.staged.room_local(static_cast<std::uint32_t>(sizeof(T))), &msg, sizeof(T));
      return;
    }
    std::byte* e = box.staged.room(static_cast<std::uint32_t>(4 + sizeof(T)));
    std::memcpy(e, &dest, 4);
    std::memcpy(e + 4, &msg, sizeof(T));
  }
  [[gnu::noinline]] static void push_var_blocked(detail::conveyor_core& c, int dest,
                                                 const void* payload, std::uint32_t len) {
    const detail::credit_wait timer(c);
    do detail::scheduler::progress_blocked();
    while (!c.push_var(dest, payload, len));
  }
  [[gnu::always_inline]] void send_var(detail::mailbox_base& box, detail::var_sends& v,
                                       std::size_t i, pe dest, const void* data, std::size_t len,
                                       source_location loc) {
    if (MAILROOM_UNLIKELY(len > v.room)) return send_large(box, v, i, dest, data, len, loc);
    send_piece(box, v, i, dest, data, static_cast<std::uint32_t>(len), loc);
  }
  // Sends one item of length word `word` (conveyor_core::k_var_piece may be set).
  [[gnu::always_inline]] void send_piece(detail::mailbox_base& box, detail::var_sends& v,
                                         std::size_t i, pe dest, const void* data,
                                         std::uint32_t word, source_location loc) {
    if (MAILROOM_UNLIKELY(!admitted(box, dest)))
      return stage_var(box, v, i, dest.rank(), data, word, loc);
    if (MAILROOM_UNLIKELY(!box.conveyor.push_var(dest.rank(), data, word)))
      push_var_blocked(box.conveyor, dest.rank(), data, word);
  }
  // A message larger than one item carries: pieces [seq][total][offset][bytes], each small
  // enough for a buffer and for a pool worker's staging block, reassembled by the mailbox there
  // (in any order: forwarding may reorder them). seq numbers this PE's large messages to it.
  [[gnu::cold, gnu::noinline]] void send_large(detail::mailbox_base& box, detail::var_sends& v,
                                               std::size_t i, pe dest, const void* data,
                                               std::size_t len, source_location loc) {
    constexpr std::size_t head_bytes = 24;
    const std::size_t piece = std::min(v.room, k_stage_room) - head_bytes;
    const std::uint64_t seq = v.next_large.fetch_add(1, std::memory_order_relaxed);
    const detail::scratch s;
    s.bytes.resize(head_bytes + piece);
    for (std::size_t off = 0; off < len; off += piece) {
      const std::size_t n = std::min(piece, len - off);
      const std::uint64_t head[3] = {seq, len, off};
      std::memcpy(s.bytes.data(), head, head_bytes);
      std::memcpy(s.bytes.data() + head_bytes, static_cast<const std::byte*>(data) + off, n);
      send_piece(box, v, i, dest, s.bytes.data(),
                 static_cast<std::uint32_t>(head_bytes + n) | detail::conveyor_core::k_var_piece,
                 loc);
    }
  }
  // The largest variable-size item a pool worker's staging block holds (after [dest][0]).
  static constexpr std::size_t k_stage_room = detail::stage_block::k_bytes - 16;
  // A variable-size send that admitted() refused (see stage): into the pool worker's staging
  // block, [dest][0][len][0][payload] (or [len][0][payload] to this PE).
  [[gnu::cold, gnu::noinline]] void stage_var(detail::mailbox_base& box, detail::var_sends& v,
                                              std::size_t i, int dest, const void* payload,
                                              std::uint32_t word, source_location loc) {
    if (MAILROOM_UNLIKELY(!pool_admitted(box, dest))) refuse(i, dest, loc);
    const std::uint32_t len = word & detail::conveyor_core::k_var_len;
    if (len > k_stage_room) {
      // (Between what a staging block and what a buffer holds: in pieces, as larger ones go.)
      MAILROOM_ASSERT((word & detail::conveyor_core::k_var_piece) == 0);
      return send_large(box, v, i, pe(dest), payload, len, loc);
    }
    const std::size_t n = detail::conveyor_core::var_item_bytes(word);
    if (dest == box.self_from) {
      detail::conveyor_core::write_var_item(box.staged.room_local(static_cast<std::uint32_t>(n)),
                                            payload, word, n);
      return;
    }
    std::byte* e = box.staged.room(static_cast<std::uint32_t>(8 + n));
    const std::int32_t head[2] = {dest, 0};
    std::memcpy(e, head, 8);
    detail::conveyor_core::write_var_item(e + 8, payload, word, n);
  }
  template <class L>
  [[gnu::cold, gnu::noinline]] void stage_lambda(detail::mailbox_base& box, std::size_t i, int dest,
                                                 L closure, source_location loc) const {
    if (MAILROOM_UNLIKELY(!pool_admitted(box, dest))) refuse(i, dest, loc);
    constexpr std::uint32_t bytes = 16 + (sizeof(L) + 7) / 8 * 8;
    if (dest == box.self_from) {  // handled from the block, by any worker (no conveyor)
      // Runs [stride][count][invoke][closures]: same-type closures follow one header.
      constexpr std::uint32_t stride = (sizeof(L) + 7) / 8 * 8;
      void (*invoke)(const std::byte*, std::uint32_t, std::uint32_t, pe, void*) noexcept =
          &detail::invoke_local_run<L, detail::lambda_owner<L, selector>>;
      detail::stage_slot& s = box.staged.mine();
      detail::stage_block* b = s.local;
      if (b != nullptr && b == s.run_block && s.run_fn == reinterpret_cast<const void*>(invoke) &&
          b->used + stride <= detail::stage_block::k_bytes &&
          (!detail::t_handler_task || b->has_handler)) {
        std::memcpy(b->data + b->used, &closure, sizeof(L));
        b->used += stride;
        std::uint32_t count;
        std::memcpy(&count, b->data + s.run_at + 4, 4);
        ++count;
        std::memcpy(b->data + s.run_at + 4, &count, 4);
        return;
      }
      std::byte* e = box.staged.room_local(16 + stride);
      s.run_block = s.local;
      s.run_at = static_cast<std::uint32_t>(e - s.local->data);
      s.run_fn = reinterpret_cast<const void*>(invoke);
      const std::uint32_t head[2] = {stride, 1};
      std::memcpy(e, head, sizeof head);
      std::memcpy(e + 8, &invoke, sizeof invoke);
      std::memcpy(e + 16, &closure, sizeof(L));
      return;
    }
    std::byte* e = box.staged.room(bytes);
    const std::uint32_t head[2] = {static_cast<std::uint32_t>(dest), bytes};
    bool (*push)(detail::conveyor_core&, int, const void*) = &push_staged<L>;
    std::memcpy(e, head, sizeof head);
    std::memcpy(e + 8, &push, sizeof push);
    std::memcpy(e + 16, &closure, sizeof(L));
  }
  // Pushes a staged closure of type L (as send does, but refusing instead of waiting).
  template <class L>
  static bool push_staged(detail::conveyor_core& c, int dest, const void* bytes) {
    alignas(L) alignas(8) std::byte copy[sizeof(L)];
    std::memcpy(copy, bytes, sizeof(L));
    const L& closure = *std::launder(reinterpret_cast<const L*>(copy));
    using owner = detail::lambda_owner<L, selector>;
    const std::uint32_t& id = detail::lambda_entry_of<L, owner>.wire_id;
    constexpr std::size_t W = detail::lambda_words<L>;
    if constexpr (detail::lambda_delta_coded<L> && sizeof(L) == W * 8 &&
                  !detail::lambda_padded<L>) {
      return c.template push_delta<W>(dest, id, &closure);
    } else if constexpr (detail::lambda_delta_coded<L>) {
      alignas(L) alignas(8) std::byte words[W * 8];
      detail::closure_words(closure, words);
      return c.template push_delta<W>(dest, id, words);
    } else {
      return c.template push_whole<W * 8, sizeof(L)>(dest, id, &closure);
    }
  }

  // (The team first: its routes outlive the mailboxes.)
  std::optional<team> team_;
  std::tuple<std::unique_ptr<detail::mailbox_impl<Specs, selector>>...> boxes_;
  std::unique_ptr<detail::selector_core> core_;
  int pes_ = 0;  // (set once the runtime is known to exist)
};

/// `mailroom::selector s{mailbox<A>(...), mailbox<B>(...)}`: Specs from the mailboxes.
template <class... Specs>
selector(Specs...) -> selector<Specs...>;
/// The same with a termination graph first.
template <class... Specs>
selector(graph, Specs...) -> selector<Specs...>;
/// The same over a team.
template <class... Specs>
selector(team, Specs...) -> selector<Specs...>;
/// The same over a team, with a termination graph.
template <class... Specs>
selector(team, graph, Specs...) -> selector<Specs...>;

/// A trivially copyable reference to a selector, valid on every PE while the selector lives.
template <class Sel>
class selector_ref {
 public:
  /// The selector numbered id (what id() and selector::ref() give).
  explicit selector_ref(std::uint64_t id) noexcept : id_(id) {}
  /// The selector's number: the same on every PE (errors and statistics name it "#id").
  [[nodiscard]] std::uint64_t id() const noexcept { return id_; }
  /// The selector on this PE (see get()).
  Sel* operator->() const noexcept { return get(); }
  /// The selector on this PE (see get()).
  Sel& operator*() const noexcept { return *get(); }
  /// The selector on this PE: a table lookup, no check that it still lives (only debug and
  /// sanitizer builds assert it).
  [[nodiscard]] Sel* get() const noexcept {
    // (One table for the job's selectors and the teams': no branch between the two, which
    // slowed the lambda variant of randperm, through a reference per message, by 15-20%.)
    using detail::scheduler;
    void* owner = scheduler::owners.slots[scheduler::owners.slot(id_)];
    MAILROOM_ASSERT(owner != nullptr);
    return static_cast<Sel*>(owner);
  }

 private:
  // A full word, not 32 bits: a closure capturing it is then built from 8-byte stores only,
  // which the lambda send path reads back as 8-byte words without a store-forwarding stall.
  std::uint64_t id_;
};

}  // namespace mailroom
