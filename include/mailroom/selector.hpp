// SPDX-License-Identifier: MIT
// Selectors: several mailboxes, each with its own message type (or lambda messages) and handler,
// partitioned over all PEs; the runtime aggregates sends, runs handlers on the owning PE and
// closes the mailboxes along their dependency graph.
#pragma once

#include "mailroom/detail/inplace.hpp"
#include "mailroom/detail/mailboxes.hpp"
#include "mailroom/detail/sends.hpp"
#include "mailroom/distribution.hpp"
#include "mailroom/mailbox.hpp"
#include "mailroom/team.hpp"

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
class selector : detail::blocked_sends {
  static_assert(sizeof...(Specs) > 0, "selector: give at least one mailbox");
  template <class, std::size_t, class, class>
  friend class detail::bound_sender;

 public:
  static constexpr std::size_t size = sizeof...(Specs);  ///< The number of mailboxes.

  /// Over the job's PEs, with the default termination graph (the chain). Collective; the
  /// runtime must be running.
  explicit selector(Specs... specs, source_location loc = source_location::current())
      : selector(graph::chain(static_cast<int>(size)), std::move(specs)..., loc) {}

  /// Over the job's PEs, with termination graph g: an edge X -> Y where X's handlers send to Y.
  // (The call site goes to functions out of line: a call_site object here, inlined into the
  // function that sends, cost the send loop of index-gather an instruction per message.)
  selector(const graph& g, Specs... specs, source_location loc = source_location::current()) {
    construct(nullptr, g, loc, std::move(specs)...);
  }

  /// Over team t (collective over its members; the world team gives the job's selector).
  selector(const team& t, Specs... specs, source_location loc = source_location::current())
      : selector(t, graph::chain(static_cast<int>(size)), std::move(specs)..., loc) {}

  /// Over team t, with termination graph g.
  selector(const team& t, const graph& g, Specs... specs,
           source_location loc = source_location::current()) {
    construct(&t, g, loc, std::move(specs)...);
  }

  selector(const selector&) = delete;
  selector& operator=(const selector&) = delete;
  /// Ends this PE's stream to every entry not yet done, and waits for termination.
  ~selector() {
    turn_.take();
    core_.reset();
  }

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
    if constexpr (detail::box_reduces<decltype(box)>) return push_reduced(box, dest.rank(), msg);
    (void)box.conveyor.template push_or<sizeof(message_type<I>), blocked_sends>(dest.rank(), &msg);
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
  /// binary archive), as a variable-size message of its bytes (a large one written straight
  /// into its pieces, after a pass that only counts them).
  template <std::size_t I>
    requires(I < size && detail::is_serialized<message_type<I>>)
  void send(pe dest, const typename message_type<I>::value_type& value,
            source_location loc = source_location::current()) {
    auto& box = *std::get<I>(boxes_);
    const detail::scratch s;
    if (message_type<I>::encode(value, s.bytes, box.var.room))
      return send_var(box, box.var, I, dest, s.bytes.data(), s.bytes.size(), loc);
    // Larger than one item: sized, then written straight into its pieces.
    send_pieces(box, box.var, I, dest, message_type<I>::size(value), loc,
                [&](detail::piece_writer& w) { message_type<I>::encode(value, w); });
  }
  /// Sends the local index d.local(g) to mailbox I (of an integer type) on g's owner under d.
  template <std::size_t I, distribution D>
    requires(I < size && std::is_integral_v<message_type<I>>)
  [[gnu::always_inline]] void send(const D& d, std::int64_t g,
                                   source_location loc = source_location::current()) {
    const place p = place_of(d, g);
    send<I>(p.owner, static_cast<message_type<I>>(p.local), loc);
  }
  /// Sends at<T>{value, d.local(g)} to mailbox I (of at<T>) on g's owner under d.
  template <std::size_t I, distribution D>
    requires(I < size && detail::is_at<message_type<I>>)
  [[gnu::always_inline]] void send(const D& d, std::int64_t g,
                                   const typename message_type<I>::value_type& value,
                                   source_location loc = source_location::current()) {
    const place p = place_of(d, g);
    send<I>(p.owner, message_type<I>{value, p.local}, loc);
  }
  /// Sends closure to lambda mailbox I on g's owner under d, where it is called with the local
  /// index first: closure(local, from, self), closure(local, from) or closure(local).
  template <std::size_t I, distribution D, class L>
    requires(I < size && std::is_void_v<message_type<I>>)
  [[gnu::always_inline]] void send(const D& d, std::int64_t g, const L& closure,
                                   source_location loc = source_location::current()) {
    const place p = place_of(d, g);
    send<I>(p.owner, detail::at_local<L>{closure, p.local}, loc);
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

  /// What bind<I>(handler) returns: sends of items T to lambda mailbox I, handled by H.
  template <std::size_t I, class T, class H>
  using bound_sender = detail::bound_sender<selector, I, T, H>;

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
    if constexpr (detail::bindable<selector, H, Item>())
      return bound_sender<I, Item, H>(*this, handler);
  }

  /// A mailbox index I out of range: a compile-time error that says so (not a failed overload).
  template <std::size_t I, class M>
    requires(I >= size)
  void send(pe, const M&) {
    static_assert(I < size, "selector::send<I>: mailbox index out of range");
  }

  /// send<I>(dest, msg) spelt `send(mailroom::to<I>, dest, msg)`: in a generic handler it needs
  /// no `template` keyword (`self.send(mr::to<1>, from, r)`, not `self.template send<1>(...)`).
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

  /// Sends every partly filled buffer now, and what reducing mailboxes hold (as credits allow):
  /// latency over aggregation (e.g. before yield()ing for a reply). Sending then goes on.
  void flush() {
    const detail::runtime_turn turn("selector::flush");
    [this]<std::size_t... I>(std::index_sequence<I...>) {
      (std::get<I>(boxes_)->flush_now(), ...);
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
  // Both constructors: over the job (t null, or the world team) or over team t.
  void construct(const team* t, const graph& g, const source_location& loc, Specs&&... specs) {
    const detail::runtime_turn turn;
    detail::scheduler::check_running("mailroom::selector", loc);
    pes_ = num_pes();
    if (t != nullptr && !detail::over_world(*t)) team_.emplace(*t);
    build(std::index_sequence_for<Specs...>{}, loc, std::move(specs)...);
    core_ = std::make_unique<detail::selector_core>(boxes_list(std::index_sequence_for<Specs...>{}),
                                                    g, "selector", loc, team_ ? &*team_ : nullptr);
    if (team_) pes_ = team_->size();
    core_->set_owner(this);
  }
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
    (std::get<I>(boxes_).emplace(std::move(specs), this, signature + static_cast<std::uint32_t>(I),
                                 team_ ? &lanes[I] : nullptr),
     ...);
  }
  template <std::size_t... I>
  std::vector<detail::mailbox_base*> boxes_list(std::index_sequence<I...>) {
    return {std::get<I>(boxes_).get()...};
  }
  // Whether this send is pushed now: the mailbox takes sends from here (worker 0's user code or
  // handlers) and dest is in range. The rest goes to the cold path (stage or stage_lambda),
  // which returns only for a pool worker's send, staged there. (A slow path that returned a
  // verdict to the send instead made GCC lay out the send loop of histogram with two taken
  // branches per message, at twice the time per message.)
  // One compare: the destination against the bound of this context (mailbox_base::send_limit).
  [[gnu::always_inline]] bool admitted(const detail::mailbox_base& box, pe dest) const {
    return MAILROOM_LIKELY(static_cast<unsigned>(dest.rank()) <
                           static_cast<unsigned>(box.send_limit[detail::scheduler::sending_from]));
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
  // noexcept, as blocked_sends' paths are (see there).
  // A send that the mailbox does not take here: stops the job, naming the caller's line.
  [[noreturn, gnu::cold, gnu::noinline]] void refuse(std::size_t i, int dest,
                                                     source_location loc) const {
    const detail::call_site here(loc);
    core_->refuse_send(static_cast<int>(i), dest);
  }
  template <class T>
  [[gnu::cold, gnu::noinline]] void stage(detail::mailbox_base& box, std::size_t i, int dest, T msg,
                                          source_location loc) const noexcept {
    if (MAILROOM_UNLIKELY(!pool_admitted(box, dest))) refuse(i, dest, loc);
    if (dest == box.self_from) {  // handled from the block, by any worker (no conveyor)
      std::memcpy(box.staged.room_local(static_cast<std::uint32_t>(sizeof(T))), &msg, sizeof(T));
      return;
    }
    std::byte* e = box.staged.room(static_cast<std::uint32_t>(4 + sizeof(T)));
    std::memcpy(e, &dest, 4);
    std::memcpy(e + 4, &msg, sizeof(T));
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
  // A message larger than one item carries: in pieces (detail/pieces.hpp), each small enough for
  // a buffer and for a pool worker's staging block; write(piece_writer&) writes its len bytes.
  template <class Write>
  void send_pieces(detail::mailbox_base& box, detail::var_sends& v, std::size_t i, pe dest,
                   std::size_t len, source_location loc, const Write& write) {
    const detail::call_site here(loc);  // (a message that writes other bytes than it sized)
    detail::send_in_pieces(
        v.next_large.fetch_add(1, std::memory_order_relaxed), len, std::min(v.room, k_stage_room),
        [&](const std::byte* piece, std::uint32_t word) {
          send_piece(box, v, i, dest, piece, word, loc);
        },
        write);
  }
  [[gnu::cold, gnu::noinline]] void send_large(detail::mailbox_base& box, detail::var_sends& v,
                                               std::size_t i, pe dest, const void* data,
                                               std::size_t len, source_location loc) noexcept {
    send_pieces(box, v, i, dest, len, loc, [&](detail::piece_writer& w) { w.write(data, len); });
  }
  // The largest variable-size item a pool worker's staging block holds (after [dest][0]).
  static constexpr std::size_t k_stage_room = detail::stage_block::k_bytes - 16;
  // A variable-size send that admitted() refused (see stage): into the pool worker's staging
  // block, [dest][0][len][0][payload] (or [len][0][payload] to this PE).
  [[gnu::cold, gnu::noinline]] void stage_var(detail::mailbox_base& box, detail::var_sends& v,
                                              std::size_t i, int dest, const void* payload,
                                              std::uint32_t word, source_location loc) noexcept {
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
                                                 L closure, source_location loc) const noexcept {
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

  // (The turn first, then the team: the members go in the destructor's turn, and the team's
  // routes outlive the mailboxes.)
  detail::runtime_turn turn_{detail::deferred_turn};
  std::optional<team> team_;
  std::tuple<detail::inplace<detail::mailbox_impl<Specs, selector>>...> boxes_;
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
