// SPDX-License-Identifier: MIT
// The untyped conveyor: one aggregation buffer per lane (per destination PE with direct
// routing; per PE of the node and per network link owned with node routing), credits per lane
// (at most `credits` buffers unacknowledged; more wait in a backlog), the queue of arrived
// buffers, forwarding, and the end of stream per link (aggregation/routes.hpp). The typed
// conveyor<T> and the runtime's mailboxes are built on it.
#pragma once

#include "mailroom/detail/buffer.hpp"
#include "mailroom/detail/records.hpp"
#include "mailroom/error.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstring>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

namespace mailroom::detail {

class exchange;  // the process's hub of the aggregation layer (src/aggregation; not installed)
struct routes;   // a conveyor's lanes and hops (src/aggregation/routes.hpp; not installed)

/// One arrived buffer: items start after the header. In a delivery buffer (node routing) each
/// item follows its origin PE (4 bytes); otherwise `source` sent them all. `from` is the sender
/// as the handlers see it: `source`, or over a team its rank there.
struct arrival {
  std::byte* buf;
  int source;
  bool origins;
  int from;
  [[nodiscard]] const buffer_header& header() const noexcept {
    return *reinterpret_cast<const buffer_header*>(buf);
  }
  [[nodiscard]] const std::byte* begin() const noexcept { return buf + k_header_bytes; }
  [[nodiscard]] const std::byte* end() const noexcept { return buf + header().bytes; }
};

/// Whether pushes may go to the credit backlog instead of refusing: true while handlers run,
/// which must never block (the runtime pauses a mailbox whose successors are backlogged).
extern bool g_may_spill;

/// What a conveyor over a team is given: the team's routes (routes::members, which outlive the
/// conveyor) and its id, the same on every member (exchange::k_team_conveyor | ...).
struct team_lanes {
  const routes* rt;
  std::uint32_t id;
};

class conveyor_core : public record_codec {
 public:
  enum class stream { open, flushing, draining, ended };

  /// Collective. With delta_records, the conveyor takes push_delta/push_whole records (runs
  /// per tag) and keeps the per-destination state they need; without, push of items of
  /// `item_bytes` bytes. `signature` names the mailbox (detail/signature.hpp); every buffer
  /// carries it and arrivals are checked. Items and records go by the job's routing
  /// (MAILROOM_ROUTING).
  /// Over a team (`team` not null), it is collective over the team's members, its lanes lead to
  /// them by rank (push(r, ...) sends to member r) and arrivals' `from` is a rank there.
  conveyor_core(bool delta_records, std::uint32_t signature, std::size_t item_bytes,
                const team_lanes* team = nullptr);
  ~conveyor_core();
  conveyor_core(const conveyor_core&) = delete;
  conveyor_core& operator=(const conveyor_core&) = delete;

  /// Appends an item of N bytes for `dest`. False (nothing appended) when the buffer for dest is
  /// full and cannot be sent yet (no credit for dest, or too many own-PE arrivals unhandled):
  /// call progress and try again.
  template <std::size_t N>
  [[nodiscard, gnu::always_inline]] bool push(int dest, const void* item) noexcept {
    return push_or<N, void>(dest, item);
  }
  /// push, but a refused item is handed to Wait::retry(*this, dest, item_copy<N>), which waits
  /// until it goes through (the runtime's sends: progress until a credit comes), and push_or
  /// returns true. The send loop then keeps nothing alive for the slow path but the lane it
  /// looked up and the item.
  template <std::size_t N, class Wait>
  [[nodiscard, gnu::always_inline]] bool push_or(int dest, const void* item) noexcept {
    MAILROOM_ASSERT(lanes_.empty() && N == item_bytes_);  // a conveyor of N-byte items
    // With node or mesh routing every destination's cursor is one of a read-only table of
    // zeros, where nothing fits: the test below sends every push to the routed path, and
    // direct routing pays nothing for it.
    cursor& c = by_dest_[static_cast<std::size_t>(dest)];
    if (MAILROOM_UNLIKELY(c.pos >= c.end)) return push_slow<N, Wait>(c, bytes_of<N>(item));
    copy_item<N>(c.pos, item);
    c.pos += N;
    return true;
  }

  /// Items combined into an earlier one before they left (message reductions: added by the
  /// mailbox's reduce_cache per window of sends and when it flushes).
  std::int64_t combined_items = 0;

  /// Message reductions at every hop (a reducing mailbox under node or grid routing): the key
  /// of an item and the rule that folds an item into an earlier one of the same key, bound to
  /// the mailbox's handler. A forwarder keeps the typed items it passes on in a direct-mapped
  /// cache of `slots` entries by (destination, key), folding each into the one it holds; they
  /// leave when evicted, at every flush and before the stream's next stage ends.
  struct hop_rule {
    void* self = nullptr;
    std::uint64_t (*key)(void* self, const std::byte* item) = nullptr;
    void (*combine)(void* self, std::byte* into, const std::byte* item) = nullptr;
  };
  void reduce_at_hops(const hop_rule& rule, std::size_t slots);
  /// Items folded at a hop here, in all and per link class they came over (they count as
  /// processed here: their effect is in the item they joined).
  [[nodiscard]] std::int64_t hop_combined_items() const noexcept;
  [[nodiscard]] std::int64_t hop_combined_items(std::uint32_t cls) const noexcept;
  /// Items that came here to be forwarded over links of class `cls`.
  [[nodiscard]] std::int64_t hop_received_items(std::uint32_t cls) const noexcept;

  /// Appends a variable-size item of `len & k_var_len` bytes for `dest` (a conveyor constructed
  /// with item_bytes 0 and no delta records), `len` its length word. False as push<N> is. The
  /// caller checks that it fits in a buffer (var_room).
  [[nodiscard]] bool push_var(int dest, const void* payload, std::uint32_t len) noexcept {
    MAILROOM_ASSERT(lanes_.empty() && item_bytes_ == 0);
    const std::size_t n = var_item_bytes(len);
    cursor& c = by_dest_[static_cast<std::size_t>(dest)];
    if (MAILROOM_UNLIKELY(n > static_cast<std::size_t>(c.end - c.pos))) {
      if (routed_) return push_var_routed(dest, payload, len);
      if (!make_room(dest, n)) return false;
    }
    write_var(c.pos, payload, len, n);
    c.pos += n;
    return true;
  }
  /// Writes a variable-size item of n = var_item_bytes(len) bytes at out.
  static void write_var_item(std::byte* out, const void* payload, std::uint32_t len,
                             std::size_t n) noexcept {
    write_var(out, payload, len, n);
  }
  /// The largest payload a variable-size item may carry: what the smallest buffer holds after
  /// its header and the longest routing prefix.
  [[nodiscard]] std::size_t var_room() const noexcept;

  /// Appends one record of W 8-byte words under `tag` (lambda messages: the handler id and the
  /// closure, its W words at `words`). The tag is passed by reference: its address, aligned to
  /// k_tag_align and holding the same tag while the conveyor lives, identifies the run on the
  /// fast path, which reads no tag. Consecutive records with the same tag for the same
  /// destination form a run [tag][count][vary][0] followed by the run's constant words (those not
  /// in the `vary` mask, once) and then, per record, only its varying words: captures that every
  /// message shares (array handles, selector references) cross the wire once per run, and the hot
  /// path writes a fixed set of aligned words with no per-record mask. A record whose constant
  /// words differ opens a new run; the changed words join `vary` unless the run was long (they
  /// change rarely). Requires a conveyor constructed with delta records.
  template <std::size_t W>
  [[nodiscard, gnu::always_inline]] bool push_delta(int dest, const std::uint32_t& tag,
                                                    const void* words) noexcept {
    // With node routing every destination maps to one lane that always looks full (the mask
    // is 0), whose slow path routes the record; direct routing pays an `and` for it.
    return push_delta_at<W>(by_dest_lane_[static_cast<std::size_t>(dest) & dest_mask_], dest, tag,
                            words);
  }
  /// push_delta into lane `ln` (index `index`; for always_full_lane_, `index` is the
  /// destination PE).
  template <std::size_t W>
  [[nodiscard, gnu::always_inline]] bool push_delta_at(auto& ln, int index,
                                                       const std::uint32_t& tag,
                                                       const void* words) noexcept {
    static_assert(W >= 1 && W <= k_delta_words);
    // A new run's header, its constant words and the record's varying words.
    constexpr std::size_t worst = k_delta_run_header + 8 * W;
    MAILROOM_ASSERT(!lanes_.empty());  // a conveyor constructed with delta records
    if (MAILROOM_UNLIKELY(ln.pos >= ln.end)) {
      if (&ln == &always_full_lane_) {
        if constexpr (W <= k_unrolled_delta_words)
          return with_words<W>(
              words, [&](auto... w) { return push_delta_routed_words<W>(index, tag, w...); });
        else
          return push_delta_routed<W>(index, tag, words_of<W>(words));
      }
      // (Past `end`, the exact test: the buffer fills as far as the record fits.)
      if (!fits(ln, worst) && !make_room(index, worst)) return false;
    }
    bool put = false;
    if constexpr (W <= k_unrolled_delta_words) {
      // One path per set of varying words, its compares and stores unrolled, chosen by one
      // jump on the open run's key less this tag's address: the set if the open run is of this
      // tag, out of range (a new run) if not (the set rarely changes: a well predicted jump).
      static_assert(k_unrolled_delta_words <= 5, "one case below per set of 5 words");
      switch (ln.open - key_of(tag)) {
// (clang-format 16 reflows this macro differently at every pass.)
// clang-format off
#define MAILROOM_VARY_CASE(v)                                                  \
  case v:                                                                      \
    if constexpr ((v) < (1u << W)) put = put_record<W, (v)>(ln, words);        \
    break;
#define MAILROOM_VARY_CASES(b)                                                     \
  MAILROOM_VARY_CASE(b + 0u) MAILROOM_VARY_CASE(b + 1u) MAILROOM_VARY_CASE(b + 2u) \
  MAILROOM_VARY_CASE(b + 3u) MAILROOM_VARY_CASE(b + 4u) MAILROOM_VARY_CASE(b + 5u) \
  MAILROOM_VARY_CASE(b + 6u) MAILROOM_VARY_CASE(b + 7u)
        MAILROOM_VARY_CASES(0u)
        MAILROOM_VARY_CASES(8u)
        MAILROOM_VARY_CASES(16u)
        MAILROOM_VARY_CASES(24u)
#undef MAILROOM_VARY_CASES
#undef MAILROOM_VARY_CASE
        // clang-format on
        default:
          break;
      }
    } else if (MAILROOM_LIKELY(ln.open == key_of(tag))) {
      put = put_record_any<W>(ln, words);
    }
    if (MAILROOM_UNLIKELY(!put)) {
      if constexpr (W <= k_unrolled_delta_words)
        with_words<W>(words, [&](auto... w) { open_and_put_words<W>(ln, tag, w...); });
      else
        open_and_put<W>(ln, tag, words_of<W>(words));
    }
    return true;
  }

  /// A bound sender's key (push_bound): unique in the process, and never a tag's address plus
  /// its varying words, which lie below k_bound_key (user space is below 2^63).
  [[nodiscard]] static std::uintptr_t next_bound_key() noexcept;
  /// A record of Wc + Wl words: Wc constant ones (`constant`), the same for every record pushed
  /// with `key`, then Wl that vary (`varying`). A run of `key` carries the constant words once,
  /// so the push compares no word: on the lane's open run of its key it writes the Wl words, as a
  /// typed push writes its item, and otherwise opens such a run. The receiver decodes it as any
  /// run of `tag` (the varying words are the set Wc..Wc+Wl-1). One key, one tag. Requires a
  /// conveyor constructed with delta records.
  /// The run's records are counted when it closes (close_run), so the push adds only its bytes
  /// to the lane's cursor, as every delta push does.
  template <std::size_t Wc, std::size_t Wl>
  [[nodiscard, gnu::always_inline]] bool push_bound(int dest, std::uintptr_t key,
                                                    const std::uint32_t& tag, const void* constant,
                                                    const void* varying) noexcept {
    static_assert(Wc + Wl <= k_delta_words && Wl >= 1);
    MAILROOM_ASSERT(!lanes_.empty());  // a conveyor constructed with delta records
    lane& ln = by_dest_lane_[static_cast<std::size_t>(dest) & dest_mask_];
    constexpr std::size_t bytes = 8 * Wl;
    // With node routing every destination maps to always_full_lane_, whose run is never open.
    if (MAILROOM_UNLIKELY(ln.pos >= ln.end || ln.open != key)) {
      // The key and the words copied into one record made here (the varying ones as scalars
      // when few): their addresses passed out of line would keep the item and the sender in
      // memory on the fast path, and passed each by value they take the stack, which costs
      // the send loop its frame pointer's register.
      if constexpr (Wl <= k_unrolled_delta_words)
        return with_words<Wl>(varying, [&](auto... w) {
          return push_bound_slow<Wc, Wl>(ln, dest, tag, bound_record<Wc, Wl>(key, constant, w...));
        });
      else
        return push_bound_slow<Wc, Wl>(ln, dest, tag, bound_record<Wc, Wl>(key, constant, varying));
    }
    // As a typed push: the words at the cursor, which moves past them.
    std::memcpy(ln.pos, varying, bytes);
    ln.pos += bytes;
    return true;
  }

  /// Appends one record of N bytes under `tag`, whole, in runs [tag][count] (records too large
  /// for push_delta). Stride is N rounded up to 8.
  template <std::size_t Stride, std::size_t N>
  [[nodiscard]] bool push_whole(int dest, const std::uint32_t& tag, const void* payload) noexcept {
    static_assert(Stride >= N);
    constexpr std::size_t worst = 8 + Stride;
    MAILROOM_ASSERT(!lanes_.empty());  // a conveyor constructed with delta records
    lane& ln = by_dest_lane_[static_cast<std::size_t>(dest) & dest_mask_];
    if (MAILROOM_UNLIKELY(!fits(ln, worst))) {
      if (&ln == &always_full_lane_) return push_whole_routed(dest, tag, payload, N, Stride);
      if (!make_room(dest, worst)) return false;
    }
    if (ln.open != key_of(tag)) open_run(ln, tag);
    std::byte* out = ln.pos;
    ln.pos = out + Stride;
    std::memcpy(out, payload, N);
    ++ln.rs.run_items;
    return true;
  }

  /// Ships every partly filled buffer. With force, never refuses (buffers without a credit go
  /// to the backlog; used at end of stream and before termination waves); without, skips
  /// destinations without a credit and returns false if it skipped any.
  bool flush(bool force);
  /// Buffers waiting for a credit.
  [[nodiscard]] bool backlogged() const noexcept;
  /// `peer` acknowledged one buffer of the lane of class `cls` to it: send the next one waiting
  /// for it, if any.
  void credit(int peer, std::uint32_t cls) noexcept;
  /// Ships what waits in the backlog for a credit and has one now (only lane `only`'s buffers
  /// if it is not -1): after an acknowledgement, or a credit of the link pool given back.
  void retry_backlog(int only = -1) noexcept;

  [[nodiscard]] bool has_arrivals() const noexcept;
  [[nodiscard]] std::size_t arrivals() const noexcept;
  [[nodiscard]] const arrival& front() const noexcept;
  /// Releases the front buffer and counts its items as processed.
  void pop_front() noexcept;

  /// Items handed to the transport (or the local queue), and items processed, on this PE.
  [[nodiscard]] std::int64_t sent_items() const noexcept;
  [[nodiscard]] std::int64_t processed_items() const noexcept;
  /// Items this PE forwarded for others (node routing).
  [[nodiscard]] std::int64_t forwarded_items() const noexcept;
  /// Pushes refused so far (counted on the slow path only: the fast path stays as it is).
  [[nodiscard]] std::uint64_t refused() const noexcept;
  [[nodiscard]] std::uint32_t signature() const noexcept { return signature_; }
  /// The PEs a push may go to: the job's, or over a team its members (ranks 0 to n - 1).
  [[nodiscard]] int destinations() const noexcept;

  /// Per lane (the lane to PE d with direct routing; routes().peer[l] with any), counted per
  /// buffer shipped (never per message): items, payload bytes and buffers.
  [[nodiscard]] const std::vector<std::int64_t>& items_to() const noexcept;
  [[nodiscard]] const std::vector<std::int64_t>& bytes_to() const noexcept;
  [[nodiscard]] const std::vector<std::int64_t>& buffers_to() const noexcept;
  /// Room for items in the buffers shipped, full or not (lanes to PEs of the node in shared slots
  /// have less): the denominator of their mean fill.
  [[nodiscard]] std::int64_t room_sent() const noexcept;
  /// Seconds senders spent waiting for a credit of this conveyor (the blocked-send slow path).
  [[nodiscard]] double credit_wait_seconds() const noexcept;
  void add_credit_wait(double seconds) noexcept;
  /// Items in partly filled buffers, and the destinations they are for (at most `most` listed).
  [[nodiscard]] std::int64_t filling_items(std::vector<int>* to = nullptr,
                                           std::size_t most = 0) const;
  /// Buffers sent and not yet acknowledged, and the PEs they wait on (at most `most` listed).
  [[nodiscard]] std::int64_t unacknowledged(std::vector<int>* to = nullptr,
                                            std::size_t most = 0) const;
  /// Buffers waiting for a credit.
  [[nodiscard]] std::size_t backlog_size() const noexcept;

  /// End of stream: this PE pushes nothing more. Then step_stream() ships what is left, ends the
  /// stream on every link (each end carries the link's item count) and drains: ended once every
  /// link has ended and every item it carried here has been processed.
  void close() noexcept;
  /// Advances the end-of-stream protocol; returns true once ended.
  bool step_stream();
  [[nodiscard]] stream stream_state() const noexcept;
  [[nodiscard]] std::uint32_t id() const noexcept { return id_; }
  [[nodiscard]] bool closed() const noexcept;

  /// Called by the exchange when a buffer for this conveyor's handlers arrives.
  void deliver(int source, std::byte* buf) noexcept;
  /// Called by the exchange when a buffer of items to forward arrives (link class `cls`).
  void deliver_transit(int source, std::byte* buf, std::uint32_t cls) noexcept;
  /// Forwards what it can of the items that arrived to be forwarded; true if it forwarded any.
  /// The exchange calls it while some wait.
  bool forward() noexcept;
  [[nodiscard]] bool forwarding() const noexcept { return forward_backlog() > 0; }
  /// Called by the exchange when `source` ends its stream of class `cls` here, having shipped
  /// `items` over that link in all.
  void end_of_stream(int source, std::uint32_t cls, std::int64_t items) noexcept;
  [[nodiscard]] const routes& route_table() const noexcept { return rt_; }
  /// For a delta-record conveyor with node routing: the bytes of a record of tag `tag` (what
  /// forwarding needs to step over whole records). Set by lambda mailboxes.
  void set_record_bytes(std::size_t (*fn)(std::uint32_t tag)) noexcept { record_bytes_ = fn; }
  /// Bytes of a conveyor's bookkeeping over routes r (src/aggregation/memory_plan.hpp).
  [[nodiscard]] static std::size_t table_bytes(const routes& r, bool delta_records) noexcept;

  // What the typed conveyor and mailboxes ask of the exchange (which inline code cannot see).
  /// Fails, naming `what` ("conveyor item", "mailbox message"), when an item of `bytes` bytes
  /// does not fit in a buffer with its header (the smaller buffer, when the node's are).
  static void check_item_fits(std::size_t bytes, const char* what);
  /// The exchange's progress (true if anything happened), and its count of idle polls (after
  /// enough in a row it may sleep: MAILROOM_IDLE_SLEEP_NS).
  static bool progress_exchange();
  static void idle_poll(bool idle) noexcept;
  /// The job's PEs.
  [[nodiscard]] static int job_pes() noexcept;
  /// Links of the classes in `classes` (bits 1 << link_class) still to end their stream here,
  /// and (at most `most` of) their PEs.
  [[nodiscard]] int open_links(std::uint32_t classes, std::vector<int>* from = nullptr,
                               std::size_t most = 0) const;
  /// Buffers that arrived to be forwarded and are not yet (node and mesh routing).
  [[nodiscard]] std::size_t forward_backlog() const noexcept;
  /// Items this PE has received, and the items its ended links announced (own items included
  /// once closed).
  [[nodiscard]] std::int64_t received_items() const noexcept;
  [[nodiscard]] std::int64_t announced_items() const noexcept;

 private:
  struct cold;                     // what the send fast path never touches (conveyor_core.cpp)
  using record_codec::put_record;  // (beside the routed put_record below)
  /// Slow path of a push of `need` bytes: ships the full buffer (or refuses), gets a new one.
  bool make_room(int lane, std::size_t need) noexcept;
  [[nodiscard]] bool can_ship(int lane) const noexcept;
  void ship(int lane) noexcept;
  // push's slow path: a lane without room or without a buffer, or any lane with node or mesh
  // routing. The item by value (bytes_of) and the lane's cursor, whose place in the table is
  // the destination: the send loop then keeps neither the item nor the destination for it.
  template <std::size_t N, class Wait>
  [[gnu::noinline]] bool push_slow(cursor& c, item_copy<N> item) noexcept {
    const auto dest = static_cast<int>(&c - by_dest_);
    // Routed: on to the routed path with what to do if it refuses (a tail call, no frame here).
    if (routed_) {
      if constexpr (k_routed_size<N>)
        return push_routed_sized<N>(dest, item, retry_of<N, Wait>());
      else
        return push_routed_copy<N>(dest, item, retry_of<N, Wait>());
    }
    return push_direct_slow<N>(c, dest, item, retry_of<N, Wait>());  // (a tail call too)
  }
  // What a refused push calls: Wait's retry, which waits until it goes through, or nothing
  // (the push returns false).
  template <std::size_t N>
  using retry_fn = void (*)(conveyor_core&, int, item_copy<N>);
  template <std::size_t N, class Wait>
  static constexpr retry_fn<N> retry_of() noexcept {
    if constexpr (std::is_void_v<Wait>)
      return nullptr;
    else
      return &Wait::template retry<N>;
  }
  template <std::size_t N>
  bool retry_or_refuse(int dest, item_copy<N> item, retry_fn<N> retry) noexcept {
    if (retry == nullptr) return false;
    retry(*this, dest, item);
    return true;
  }
  template <std::size_t N>
  [[gnu::noinline]] bool push_direct_slow(cursor& c, int dest, item_copy<N> item,
                                          retry_fn<N> retry) noexcept {
    if (!make_room(dest, N)) return retry_or_refuse(dest, item, retry);
    std::memcpy(c.pos, item.b, N);
    c.pos += N;
    return true;
  }
  // The routed path of a typed push: one per usual size (conveyor_core.cpp), a shared one for
  // the others.
  template <std::size_t N>
  static constexpr bool k_routed_size =
      N == 4 || N == 8 || N == 12 || N == 16 || N == 24 || N == 32;
  template <std::size_t N>
  [[gnu::noinline]] bool push_routed_sized(int dest, item_copy<N> c, retry_fn<N> retry) noexcept;
  template <std::size_t N>
  [[gnu::noinline]] bool push_routed_full(int dest, item_copy<N> c, retry_fn<N> retry) noexcept;
  template <std::size_t N, std::size_t Words>
  bool put_if_room(int lane_no, const std::uint32_t* prefix, const std::byte* item) noexcept;
  template <std::size_t N>
  [[gnu::noinline]] bool push_routed_copy(int dest, item_copy<N> c, retry_fn<N> retry) noexcept {
    return push_routed(dest, c.b) || retry_or_refuse(dest, c, retry);
  }
  bool push_routed(int dest, const void* item) noexcept;
  template <std::size_t N>
  bool push_routed_n(int dest, const void* item) noexcept;
  static std::uint32_t network_prefix(std::uint32_t hop, std::uint32_t origin_local) noexcept;
  template <std::size_t Words, class Write>
  bool put_item(int lane_no, const std::uint32_t* prefix, std::size_t bytes, bool forwarded,
                Write write) noexcept;
  template <std::size_t N, std::size_t Words>
  bool put_n(int lane_no, const std::uint32_t* prefix, const void* item, bool forwarded) noexcept;
  [[gnu::noinline]] bool push_var_routed(int dest, const void* payload, std::uint32_t len) noexcept;
  template <std::size_t Words>
  bool put_var(int lane_no, const std::uint32_t* prefix, const void* payload, std::uint32_t len,
               bool forwarded) noexcept;
  bool room_for(int lane_no, std::size_t need, bool forwarded) noexcept;
  // The bytes a typed lane's buffer has left (without a buffer, less than any item needs: both
  // null, so max(item, 1) - 1).
  [[nodiscard]] std::size_t room_of(const cursor& c) const noexcept {
    return static_cast<std::size_t>(c.end - c.pos) + std::max<std::size_t>(item_bytes_, 1) - 1;
  }
  template <class Items>
  bool forward_items(std::size_t q, Items items) noexcept;
  struct node_step;  // node routing's next hop for a forwarded item (conveyor_core.cpp)
  template <bool Transit, class Form, class Items>
  const std::byte* forward_run(const std::byte* p, const std::byte* end, Items items,
                               const node_step& step, std::int64_t& moved) noexcept;
  template <std::size_t N>
  struct fixed_items;
  struct var_items;
  bool forward_queue(std::size_t q) noexcept;
  void forwarded_front(std::size_t q);
  [[nodiscard]] std::uint32_t transit_origin(int source) const noexcept;
  [[nodiscard]] int far_node_of(int source) const noexcept;
  [[nodiscard]] int next_lane(std::size_t q, int source, std::uint32_t dest,
                              std::uint32_t origin) const noexcept;
  [[nodiscard]] int grid_next(std::uint32_t cls, int source, std::uint32_t dest,
                              std::uint32_t origin) const noexcept;
  [[noreturn]] void bad_forward(int source, std::uint32_t dest) const noexcept;
  template <std::size_t W, class... Word>
  [[gnu::noinline]] bool push_delta_routed_words(int dest, const std::uint32_t& tag,
                                                 Word... w) noexcept {
    return push_delta_routed<W>(dest, tag, record_words<W>{w...});
  }
  // (Defined in conveyor_core.cpp for every W up to k_delta_words.)
  template <std::size_t W>
  [[gnu::noinline]] bool push_delta_routed(int dest, const std::uint32_t& tag,
                                           record_words<W> c) noexcept;
  // push_bound's slow path: a lane without its key's run open, or without room for the record.
  // Routed, the record goes as a push_delta's would.
  template <std::size_t Wc, std::size_t Wl>
  [[gnu::noinline]] bool push_bound_slow(lane& ln, int dest, const std::uint32_t& tag,
                                         const bound_record<Wc, Wl>& r) noexcept {
    constexpr std::size_t W = Wc + Wl;
    if (&ln == &always_full_lane_) return push_delta_routed<W>(dest, tag, r.words);
    if (ln.open != r.key || !fits(ln, 8 * Wl)) {
      constexpr std::size_t worst = k_delta_run_header + 8 * W;
      if (!fits(ln, worst) && !make_room(dest, worst)) return false;
      open_bound_run<Wc, Wl>(ln, tag, r);
    }
    std::byte* out = ln.pos;
    ln.pos = out + 8 * Wl;  // (counted when the run closes)
    std::memcpy(out, r.words.data() + Wc, 8 * Wl);
    return true;
  }
  [[gnu::noinline]] bool push_whole_routed(int dest, const std::uint32_t& tag, const void* payload,
                                           std::size_t n, std::size_t stride) noexcept;
  /// Appends a whole record (`n` bytes of `data`, taking `stride` bytes, n if 0) under tag
  /// value `tag` to routed lane `lane`, after [dest][origin]: origin this PE unless forwarded
  /// (then `origin`).
  bool put_record(int lane, std::uint32_t tag, std::uint32_t dest, const void* data, std::size_t n,
                  bool forwarded, std::uint32_t origin = 0, std::size_t stride = 0) noexcept;
  bool forward_records(std::size_t q) noexcept;
  // Message reductions at hops (reduce_at_hops): folds or holds a forwarded item for `dest`
  // bound for lane_no after `words` prefix words; pushes the held ones.
  bool hop_fold(int lane_no, std::size_t words, const std::uint32_t* prefix, const std::byte* item,
                std::uint32_t dest, std::uint32_t cls) noexcept;
  bool flush_hops() noexcept;
  bool put_held(const std::byte* at) noexcept;
  /// Ships every partly filled lane of class `cls` and ends its stream on each.
  void end_lanes(std::uint32_t cls);
  /// Every link of class `cls` has ended here and everything it brought has been forwarded.
  [[nodiscard]] bool stage_clear(std::uint32_t cls) const noexcept;

  exchange& ex_;
  const routes& rt_;
  bool over_team_;
  bool routed_;
  std::size_t item_bytes_;
  std::uint32_t id_;
  std::uint32_t capacity_;
  int me_;
  std::vector<cursor> cursors_;  // per lane (typed conveyors; empty with delta records)
  // Per destination: cursors_ (direct), or a read-only table of zeros (routed, zero_cursors_).
  cursor* by_dest_ = nullptr;
  void* zero_cursors_ = nullptr;  // (its mapping, of zero_bytes_ bytes)
  std::size_t zero_bytes_ = 0;
  lane* by_dest_lane_ = nullptr;             // lanes_ (direct), or &always_full_lane_ (routed)
  static lane always_full_lane_;             // (never written)
  std::size_t dest_mask_ = ~std::size_t{0};  // (of lanes) 0 with node or mesh routing
  std::size_t (*record_bytes_)(std::uint32_t tag) = nullptr;
  std::vector<lane> lanes_;  // per lane (delta-record conveyors, direct: per PE; else empty)
  std::uint32_t signature_;
  std::unique_ptr<cold> s_;
  [[nodiscard]] std::size_t dests() const noexcept { return cursors_.size() + lanes_.size(); }
  // A lane's buffer (null: none) and its bytes and items so far (conveyor_core.cpp).
  [[nodiscard]] std::byte* buffer_of(std::size_t l) const noexcept;
  [[nodiscard]] std::uint32_t bytes_of_lane(std::size_t l) const noexcept;
  [[nodiscard]] std::uint32_t items_of(std::size_t l) const noexcept;
  // Whether lane l's buffer holds records: items, or an open push_bound run (it has one record
  // at least, counted only when it closes).
  [[nodiscard]] bool has_items(std::size_t l) const noexcept;
  // Tokens of lanes' pools (docs/design.md, flow control; conveyor_core.cpp).
  bool take_from_pool(std::size_t l) noexcept;
  bool take_token(std::size_t l) noexcept;
  bool buffer_for(std::size_t l) noexcept;
  [[nodiscard]] std::uint32_t in_flight_limit(std::size_t l) const noexcept;
};

}  // namespace mailroom::detail
