// SPDX-License-Identifier: MIT
// The mailboxes behind a selector, one class per kind of message (typed, variable-size,
// serialized, lambdas): how a handler is called, how arrivals are decoded, how a bound send's
// record is laid out. Not API: selector.hpp is.
#pragma once

#include "mailroom/detail/lambda_registry.hpp"
#include "mailroom/detail/pieces.hpp"
#include "mailroom/detail/reduce_cache.hpp"
#include "mailroom/detail/scheduler.hpp"
#include "mailroom/detail/signature.hpp"
#include "mailroom/mailbox.hpp"
#include "mailroom/runtime.hpp"
#include "mailroom/termination.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
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

// Whether a mailbox handler places large messages itself (place(total, split), placed(head,
// from, self)): the decoding handler of strings and vectors of numbers (mailroom/serialized.hpp).
template <class H>
inline constexpr bool places_pieces = false;

// The handler of a mailbox of serialized<T>: decodes the bytes, then calls the user's handler
// (mailroom/serialized.hpp has the one for strings and vectors of numbers).
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
    MAILROOM_CHECK(!threads_share_pe() || 4 + sizeof(T) <= stage_block::k_bytes,
                   "mailbox message of {} bytes: with MAILROOM_WORKERS > 1 a message is at most "
                   "{} bytes (the blocks in which workers stage their sends)",
                   sizeof(T), stage_block::k_bytes - 4);
    conveyor_core::check_item_fits(sizeof(T), "mailbox message");
    if constexpr (is_reducing<H>) {
      cache_.resize(current_config().reduce_slots);
      if (current_config().reduce_hops != 0)
        conveyor.reduce_at_hops({this, &hop_key, &hop_combine}, current_config().reduce_slots);
    }
  }

  /// Whether messages to this mailbox are combined at the sender (mailbox_spec::reduce).
  static constexpr bool reduces = is_reducing<H>;
  /// A send to a reducing mailbox (reduce_cache::hold): true when a message must be pushed now.
  [[gnu::always_inline]] bool hold(int dest, const T& msg, int& out_dest, T& out) {
    return cache_.hold(handler_, conveyor, dest, msg, out_dest, out);
  }
  /// Whether this send skips the cache (reduce_cache::bypassed).
  [[gnu::always_inline]] bool bypassed() noexcept { return cache_.bypassed(); }
  // Message reductions at hops (conveyor_core::reduce_at_hops): the handler's key and rule over
  // an item's bytes.
  static std::uint64_t hop_key(void* self, const std::byte* item) {
    T m;
    std::memcpy(&m, item, sizeof m);
    return static_cast<mailbox_impl*>(self)->handler_.key(m);
  }
  static void hop_combine(void* self, std::byte* into, const std::byte* item) {
    T a, b;
    std::memcpy(&a, into, sizeof a);
    std::memcpy(&b, item, sizeof b);
    static_cast<mailbox_impl*>(self)->handler_.combine(a, b);
    std::memcpy(into, &a, sizeof a);
  }
  bool flush_reduced() override {
    if constexpr (is_reducing<H>)
      return cache_.flush(conveyor);
    else
      return true;
  }
  [[nodiscard]] bool holds_reduced() const noexcept override {
    if constexpr (is_reducing<H>)
      return cache_.holds();
    else
      return false;
  }

  void process_front() override {
    const arrival& a = conveyor.front();
    if (MAILROOM_UNLIKELY(concurrent_handlers)) return hand_over(a);
    scheduler::current_source = a.source;  // (sender(): the PE, over a team too)
    with_handler([&](H& h) { run_items(h, a.begin(), a.end(), a.from, a.origins, true); });
    scheduler::current_source = -1;
    conveyor.pop_front();
  }

  // Entries [message] (Sel::stage), from this PE.
  void run_local(const stage_block& b) override {
    scheduler::current_source = self_source;
    // (Concurrent handlers run blocks on several workers at once: on the member, not copies.)
    if (concurrent_handlers)
      run_items(handler_, b.data, b.data + b.used, self_from, false, false);
    else
      with_handler([&](H& h) { run_items(h, b.data, b.data + b.used, self_from, false, false); });
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
  // Runs `run` on the handler, inlined into a batch loop: no indirect call per message. A small
  // one runs as a local copy: the compiler then keeps what it captures (by value, and the
  // addresses it captures by reference) in registers across the loop, where a member would be
  // reloaded after every store the handler makes (a send stores bytes, which may alias the
  // member). The copy's bytes go back after the batch, so whatever state the handler keeps (a
  // mutable lambda's captures, a functor's members, mutable members changed by a const call)
  // goes on to the next one, whether or not the type can be assigned (a lambda cannot): a
  // trivially copyable object may be copied byte-wise. Randperm's handler: 3% fewer
  // instructions, selector/conveyor 1.07 -> 1.00; run on its own PE's messages too, 162.5 ->
  // 149.4 instructions per dart with its PE count captured by value (no division from memory).
  template <class F>
  [[gnu::always_inline]] void with_handler(F&& run) {
    if constexpr (std::is_trivially_copyable_v<H> && std::is_copy_constructible_v<H> &&
                  sizeof(H) <= 256) {
      H h = handler_;
      run(h);
      std::memcpy(static_cast<void*>(&handler_), &h, sizeof(H));
    } else {
      run(handler_);
    }
  }
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
    // Unrolled: a small handler (an increment, a store) is then two or three instructions a
    // message, where the loop's own step, compare and branch would add three more to each.
    // The selector by a local reference: the member would be reloaded after every store a send
    // of the handler makes (one instruction per message).
    const pe source(from);
    Sel& self = *self_;
    const auto n = static_cast<std::size_t>(end - p) / sizeof(T);
#pragma GCC unroll 8
    for (std::size_t k = 0; k < n; ++k) {
      T msg;
      std::memcpy(&msg, p + k * sizeof(T), sizeof(T));
      call_handler(h, msg, source, self);
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

  // A message a reducing mailbox sent and may still combine into: its buffer and offset there.
  H handler_;
  Sel* self_;
  [[no_unique_address]] std::conditional_t<is_reducing<H>, reduce_cache<T, H>, no_reduce_cache>
      cache_;
};

/// Whether a typed mailbox (a mailbox_impl, by reference) combines messages at the sender.
template <class Box>
inline constexpr bool box_reduces = std::remove_cvref_t<Box>::reduces;

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
// (len has k_var_piece; detail/pieces.hpp), reassembled here before its handler runs.
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
    MAILROOM_CHECK(large_.partial() == 0,
                   "a mailbox of variable-size messages ends with {} large "
                   "message(s) partly arrived",
                   large_.partial());
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
      aligned.resize((len + 7) / 8 + 1);  // (never empty: memcpy takes no null, even for 0)
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
  // A piece of a large message from `from` (detail/pieces.hpp): the handler runs on the whole
  // once every byte has arrived.
  // A handler that places messages (places_pieces: a decoding_handler) is asked where each goes.
  [[gnu::cold, gnu::noinline]] void piece(const std::byte* payload, std::uint32_t len, pe from) {
    reassembly::message whole;
    if constexpr (places_pieces<H>) {
      constexpr reassembly::place_fn place = [](void* h, std::uint64_t total, std::size_t& split) {
        return static_cast<H*>(h)->place(total, split);
      };
      if (!large_.add(payload, len, from.rank(), whole, place, &handler_)) return;
      if (whole.rest != nullptr) return handler_.placed(whole.head, from, *self_);
    } else if (!large_.add(payload, len, from.rank(), whole)) {
      return;
    }
    call(whole.words.get(), whole.bytes, from);
    large_.recycle(std::move(whole));
  }

  H handler_;
  Sel* self_;
  reassembly large_;  ///< large messages partly arrived
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

}  // namespace mailroom
