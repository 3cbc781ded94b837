// SPDX-License-Identifier: MIT
// The sends of a selector away from its fast path: the pushes that wait for credits (out of
// line, the message by value, so that the send loop keeps nothing alive for them), and the
// senders selector::bind makes. Not API: selector.hpp is.
#pragma once

#include "mailroom/detail/conveyor_core.hpp"
#include "mailroom/detail/lambda_registry.hpp"
#include "mailroom/detail/mailboxes.hpp"
#include "mailroom/detail/scheduler.hpp"

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace mailroom::detail {

/// The slow paths of send: the buffer for dest is full and cannot be shipped yet. They run
/// progress until the push goes through, out of line and with the message by value, so that the
/// fast path keeps nothing alive for them: no spills in a send loop (selector derives from it).
/// noexcept, as every cold path a send reaches inline: a call that may throw and passes
/// arguments on the stack costs the caller's loop its frame-pointer register (docs/design.md).
struct blocked_sends {
  // A send to a reducing mailbox: combined into the message its cache holds for the same key
  // and PE, or held there, pushing the message it evicts.
  template <class Box, class T>
  [[gnu::always_inline]] static void push_reduced(Box& box, int dest, const T& msg) {
    if (!box.bypassed()) {
      int to;
      T out;
      if (!box.hold(dest, msg, to, out)) return;
      (void)box.conveyor.template push_or<sizeof(T), blocked_sends>(to, &out);
      return;
    }
    // (The cache missed too often of late: the message goes as to any mailbox.)
    (void)box.conveyor.template push_or<sizeof(T), blocked_sends>(dest, &msg);
  }
  // conveyor_core::push_or's Wait for a typed send: runs progress until the push goes through.
  template <std::size_t N>
  [[gnu::noinline]] static void retry(detail::conveyor_core& c, int dest,
                                      detail::conveyor_core::item_copy<N> item) noexcept {
    const detail::credit_wait timer(c);
    do detail::scheduler::progress_blocked();
    while (!c.template push<N>(dest, item.b));
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
                                                         const std::uint32_t& id,
                                                         Word... w) noexcept {
    push_delta_blocked_record<W>(c, dest, id, detail::conveyor_core::record_words<W>{w...});
  }
  template <std::size_t W>
  [[gnu::noinline]] static void push_delta_blocked_record(
      detail::conveyor_core& c, int dest, const std::uint32_t& id,
      detail::conveyor_core::record_words<W> words) noexcept {
    const detail::credit_wait timer(c);
    do detail::scheduler::progress_blocked();
    while (!c.template push_delta<W>(dest, id, words.data()));
  }
  template <class L>
  [[gnu::noinline]] static void push_whole_blocked(detail::conveyor_core& c, int dest,
                                                   const std::uint32_t& id, L closure) noexcept {
    constexpr std::size_t W = detail::lambda_words<L>;
    const detail::credit_wait timer(c);
    do detail::scheduler::progress_blocked();
    while (!c.template push_whole<W * 8, sizeof(L)>(dest, id, &closure));
  }
  [[gnu::noinline]] static void push_var_blocked(detail::conveyor_core& c, int dest,
                                                 const void* payload, std::uint32_t len) noexcept {
    const detail::credit_wait timer(c);
    do detail::scheduler::progress_blocked();
    while (!c.push_var(dest, payload, len));
  }
};

// selector::bind's checks, each a message that says what to change: whether the handler H and
// item Item make a bound sender (otherwise bind returns nothing, after the message).
template <class Sel, class H, class Item>
consteval bool bindable() {
  static_assert(!std::is_void_v<Item>,
                "bind: name the item type (sel.bind<I, T>(handler)): it cannot be deduced from a "
                "handler whose call operator is a template (auto parameters)");
  static_assert(std::is_class_v<H>,
                "bind: the handler must be a lambda or function object, not a function pointer: "
                "code addresses differ from one PE to another");
  if constexpr (!std::is_void_v<Item> && std::is_class_v<H>) {
    using M = detail::bound_message<H, Item, Sel>;
    static_assert(std::is_trivially_copyable_v<H>,
                  "bind: the handler must be trivially copyable: capture by value only plain "
                  "data, pointers into symmetric memory (symmetric_array) and mailroom handles");
    static_assert(std::is_trivially_copyable_v<Item>,
                  "bind: the item must be trivially copyable (it travels by value)");
    static_assert(detail::lambda_callable<M, Sel>,
                  "bind: the handler must be callable as (T item), (T item, mailroom::pe from) "
                  "or (T item, mailroom::pe from, auto& self)");
    static_assert(sizeof(M) <= 4096, "bind: handler and item larger than 4 KiB: capture less");
  }
  return !std::is_void_v<Item> && std::is_class_v<H>;
}

/// The sends of selector::bind (Sel: the selector): copyable, cheap to keep for a send loop.
template <class Sel, std::size_t I, class T, class H>
class bound_sender {
  using M = detail::bound_message<H, T, Sel>;
  using owner = detail::lambda_owner<M, Sel>;
  using core = detail::conveyor_core;
  static constexpr std::size_t Wc = std::is_empty_v<H> ? 0 : sizeof(H) / 8;
  static constexpr std::size_t Wl = detail::lambda_words<T>;
  // A handler of whole 8-byte words (or none), and at most 16 words with the item: pushed as
  // one run per sender (conveyor_core::push_bound). Otherwise sent as send<I> would.
  static constexpr bool k_bound = (std::is_empty_v<H> || (sizeof(H) % 8 == 0 && alignof(H) <= 8)) &&
                                  alignof(T) <= 8 && detail::lambda_delta_coded<M> &&
                                  detail::lambda_words<M> == Wc + Wl;

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
  friend Sel;
  bound_sender(Sel& sel, const H& h) : sel_(&sel), h_(h) {
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
                                               const core::bound_record<Wc, Wl>& r) noexcept {
    const detail::credit_wait timer(c);
    do detail::scheduler::progress_blocked();
    while (!c.template push_bound<Wc, Wl>(dest, r.key, id, r.words.data(), r.words.data() + Wc));
  }
  Sel* sel_;
  std::uintptr_t key_ = 0;
  [[no_unique_address]] H h_;
  alignas(8) std::byte words_[Wc > 0 ? Wc * 8 : 8] = {};  // h_'s words
};

}  // namespace mailroom::detail
