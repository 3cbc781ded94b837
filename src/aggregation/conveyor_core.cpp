// SPDX-License-Identifier: MIT
// The untyped conveyor: lanes and credits, local delivery, forwarding (node routing) and the
// end of stream per link.
#include "mailroom/detail/conveyor_core.hpp"

#include "mailroom/detail/thread.hpp"

#include "aggregation/exchange.hpp"
#include "aggregation/memory_plan.hpp"
#include "aggregation/routes.hpp"
#include "common/guard.hpp"
#include "common/trace.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdio>
#include <deque>
#include <tuple>
#include <type_traits>
#include <utility>

#include <sys/mman.h>

namespace mailroom::detail {

namespace {
exchange& running_exchange() {
  MAILROOM_CHECK(exchange::running(),
                 "a conveyor or mailbox was created before mailroom::runtime exists (construct "
                 "`mailroom::runtime rt(argc, argv);` first)");
  if (t_worker > 0) check_runtime_thread("constructing a conveyor or mailbox");
  return exchange::get();
}

// Pages of zeros mapped read-only (a routed typed conveyor's table of cursors): reading them maps
// the one zero page, so they cost address space, not memory.
void* map_zeros(std::size_t bytes) {
  void* p = ::mmap(nullptr, std::max<std::size_t>(bytes, 1), PROT_READ,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  MAILROOM_CHECK(p != MAP_FAILED, "could not map {} bytes of address space for a mailbox's table",
                 bytes);
  return p;
}
void unmap_zeros(void* p, std::size_t bytes) noexcept {
  ::munmap(p, std::max<std::size_t>(bytes, 1));
}
}  // namespace

void conveyor_core::check_item_fits(std::size_t bytes, const char* what) {
  const exchange& ex = running_exchange();
  MAILROOM_CHECK(bytes + k_header_bytes <= ex.node_capacity(),
                 "{} of {} bytes does not fit in {}={}", what, bytes, ex.size_setting(),
                 ex.node_capacity());
}

bool conveyor_core::progress_exchange() { return exchange::get().progress(); }

void conveyor_core::idle_poll(bool idle) noexcept { exchange::get().idle_poll(idle); }

int conveyor_core::job_pes() noexcept { return exchange::get().pes(); }

std::uintptr_t conveyor_core::next_bound_key() noexcept {
  // (Per process: the simulated machine's PEs share the count, and need only tell keys apart.)
  static std::atomic<std::uintptr_t> next{0};
  const std::uintptr_t n = next.fetch_add(1, std::memory_order_relaxed) + 1;
  MAILROOM_CHECK(n < k_bound_key, "more than {} bound senders in one process", k_bound_key - 1);
  return k_bound_key | n;
}

// What the send fast path never touches: credits and tokens per lane, the backlog, arrivals,
// the forwarding queues, the counters and the end of stream per link.
struct conveyor_core::cold {
  explicit cold(const routes& rt)
      : sent_to_(static_cast<std::size_t>(rt.lanes()), 0),
        bytes_to_(static_cast<std::size_t>(rt.lanes()), 0),
        buffers_to_(static_cast<std::size_t>(rt.lanes()), 0),
        forwarded_in_(rt.routed ? static_cast<std::size_t>(rt.lanes()) : 0, 0),
        outstanding_(static_cast<std::size_t>(rt.lanes()), 0),
        forward_(2 * static_cast<std::size_t>(rt.stages)),
        forward_at_(forward_.size(), 0),
        run_left_(forward_.size(), 0),
        run_tag_(forward_.size(), 0),
        limits_(static_cast<std::size_t>(rt.lanes())),
        pool_out_(static_cast<std::size_t>(rt.lanes()), 0) {
    for (std::size_t c = 0; c < k_link_classes; ++c) {
      links_open_[c] = static_cast<int>(rt.in_peers[c].size());
      ended_[c].assign(rt.in_peers[c].size(), 0);
    }
  }
  std::vector<std::int64_t> sent_to_;                // items per lane
  std::vector<std::int64_t> bytes_to_, buffers_to_;  // payload bytes and buffers per lane
  std::vector<std::uint32_t> forwarded_in_;          // forwarded items in a lane's open buffer
  double credit_wait_s_ = 0;
  std::int64_t room_sent_ = 0;
  std::vector<std::uint32_t> outstanding_;          // unacknowledged buffers per lane
  std::deque<std::pair<int, std::byte*>> backlog_;  // full buffers (and lanes) waiting for a credit
  // The forwarding queues: one per class that forwards, never shared. An item must never wait
  // behind one of an earlier stage, which may wait for a credit this one's stage frees
  // (docs/design.md, routing). Buffers of items to forward, per queue (queue_of: the class's
  // place among the forwarded ones, transit(0) first), and how far the front one of each has
  // been forwarded.
  static constexpr std::uint32_t queue_class(std::size_t q) noexcept {
    return static_cast<std::uint32_t>(q) + k_transit;
  }
  static constexpr std::size_t queue_of(std::uint32_t cls) noexcept { return cls - k_transit; }
  struct transit {
    std::byte* buf;
    int source;
  };
  std::vector<std::deque<transit>> forward_;
  std::vector<std::uint32_t> forward_at_;
  std::vector<std::uint32_t> run_left_, run_tag_;  // records: the run forwarded
  reservation taken_;                              // slots or heap, and the credits
  // Per lane: where its buffers come from and how many may be out. A lane to a PE of this node
  // fills a shared slot of node_capacity bytes when the conveyor's node lanes are in slots; its
  // fill's buf then points `offset` = capacity - node_capacity bytes before the buffer, so that
  // the sends' one compare against capacity_ holds for every lane.
  // A lane to another node (`shared`) and a slot lane to another PE of the node each have one
  // buffer of their own, filling or in flight; for more they take tokens of a pool shared by the
  // PE's conveyors: the exchange's link pool, the shared pool's extra slots. Per lane, pool_out_
  // counts the tokens it holds (docs/design.md, flow control).
  struct lane_limit {
    std::uint32_t offset = 0;
    std::uint32_t credits = 0;
    bool slot = false;
    bool shared = false;
    bool pooled = false;  // a slot lane to another PE: its own slot, then extras
  };
  std::vector<lane_limit> limits_;
  std::vector<std::uint32_t> pool_out_;
  // A typed conveyor's lanes (cursors_ holds where each writes): the buffer each fills (null:
  // none).
  std::vector<std::byte*> bufs_;
  std::deque<arrival> arrivals_;
  std::int64_t sent_items_ = 0, received_items_ = 0, processed_items_ = 0, forwarded_items_ = 0;
  std::uint64_t refused_ = 0;
  // End of stream, per link class: per link in (routes::in_link) whether it has ended, how many
  // links are still open, the items they announced and the items received; and the classes
  // whose lanes this PE has ended.
  std::array<std::vector<std::uint8_t>, k_link_classes> ended_;
  std::array<int, k_link_classes> links_open_{};
  std::array<std::int64_t, k_link_classes> expected_{}, received_{};
  std::uint64_t lanes_ended_ = 0;
  stream state_ = stream::open;
  // Message reductions at hops (reduce_at_hops): the rule, and per forwarding queue a cache
  // (allocated at its first item; entries of hop_stride_ bytes, a hop_entry and the item), with
  // how many entries it holds and where an unfinished flush resumes; how many all hold, and per
  // class the items folded. A cache per queue: an item evicted from it goes on to a later stage
  // than its queue's, as every forwarded item does, so no stage waits for itself.
  struct hop_cache {
    std::vector<std::uint64_t> slots;
    std::uint32_t held = 0;
    std::size_t flush_at = 0;
  };
  hop_rule hop_;
  std::size_t hop_slots_ = 0, hop_stride_ = 0;
  std::vector<hop_cache> hops_;
  std::uint32_t hop_held_ = 0;
  std::int64_t hop_combined_all_ = 0;
  std::array<std::int64_t, k_link_classes> hop_combined_{};
};

namespace {
// An entry of the hop cache, before its item: the item's key and destination (-1: empty), the
// lane it goes on and its prefix words there.
struct hop_entry {
  std::uint64_t key;
  std::int32_t dest;
  std::int32_t lane;
  std::uint32_t prefix[2];
  std::uint32_t words;
  std::uint32_t unused;
};
static_assert(sizeof(hop_entry) == 32);
}  // namespace

bool conveyor_core::backlogged() const noexcept { return !s_->backlog_.empty(); }
bool conveyor_core::has_arrivals() const noexcept { return !s_->arrivals_.empty(); }
std::size_t conveyor_core::arrivals() const noexcept { return s_->arrivals_.size(); }
const arrival& conveyor_core::front() const noexcept { return s_->arrivals_.front(); }
std::int64_t conveyor_core::sent_items() const noexcept { return s_->sent_items_; }
std::int64_t conveyor_core::processed_items() const noexcept { return s_->processed_items_; }
std::int64_t conveyor_core::forwarded_items() const noexcept { return s_->forwarded_items_; }
std::uint64_t conveyor_core::refused() const noexcept { return s_->refused_; }
int conveyor_core::destinations() const noexcept { return over_team_ ? rt_.lanes() : rt_.pes; }
const std::vector<std::int64_t>& conveyor_core::items_to() const noexcept { return s_->sent_to_; }
const std::vector<std::int64_t>& conveyor_core::bytes_to() const noexcept { return s_->bytes_to_; }
const std::vector<std::int64_t>& conveyor_core::buffers_to() const noexcept {
  return s_->buffers_to_;
}
std::int64_t conveyor_core::room_sent() const noexcept { return s_->room_sent_; }
double conveyor_core::credit_wait_seconds() const noexcept { return s_->credit_wait_s_; }
void conveyor_core::add_credit_wait(double seconds) noexcept { s_->credit_wait_s_ += seconds; }
std::size_t conveyor_core::backlog_size() const noexcept { return s_->backlog_.size(); }
conveyor_core::stream conveyor_core::stream_state() const noexcept { return s_->state_; }
bool conveyor_core::closed() const noexcept { return s_->state_ != stream::open; }
std::int64_t conveyor_core::received_items() const noexcept { return s_->received_items_; }
std::int64_t conveyor_core::announced_items() const noexcept {
  return s_->expected_[k_final] + s_->expected_[k_delivery];
}

// The buffers lane l may have unacknowledged: its credits, and on a pooled lane no more than
// the tokens it holds (its own and those taken: a buffer filled on a token ships on it).
inline std::uint32_t conveyor_core::in_flight_limit(std::size_t l) const noexcept {
  const cold::lane_limit& lim = s_->limits_[l];
  if (lim.shared) return lim.credits + s_->pool_out_[l];
  return lim.pooled ? std::min(lim.credits, 1 + s_->pool_out_[l]) : lim.credits;
}

// A typed item's prefix on a network lane: the destination's index on its node (from its hop)
// and the origin's on this node, 2 bytes each.
std::uint32_t conveyor_core::network_prefix(std::uint32_t hop,
                                            std::uint32_t origin_local) noexcept {
  return routes::local_of_hop(hop) | origin_local << 16;
}

// Appends an item of `bytes` bytes to `lane_no` after Words 4-byte prefix words (its prefix on
// a transit, network or delivery lane, or none), written by write(out). `forwarded`: an item
// this PE forwards (not its own), which never spills.
template <std::size_t Words, class Write>
[[gnu::always_inline]] inline bool conveyor_core::put_item(int lane_no, const std::uint32_t* prefix,
                                                           std::size_t bytes, bool forwarded,
                                                           Write write) noexcept {
  const std::size_t need = bytes + 4 * Words;
  const auto l = static_cast<std::size_t>(lane_no);
  cursor& c = cursors_[l];
  if (MAILROOM_UNLIKELY(need > room_of(c)) && !room_for(lane_no, need, forwarded)) return false;
  std::byte* out = c.pos;
  if constexpr (Words > 0) std::memcpy(out, prefix, 4 * Words);
  write(out + 4 * Words);
  c.pos += need;
  if (forwarded) {
    ++s_->forwarded_in_[l];
    ++s_->forwarded_items_;
  }
  return true;
}

// put_item of a typed item of N bytes (0: item_bytes_, copied by size at run time).
template <std::size_t N, std::size_t Words>
[[gnu::always_inline]] inline bool conveyor_core::put_n(int lane_no, const std::uint32_t* prefix,
                                                        const void* item, bool forwarded) noexcept {
  const std::size_t n = N > 0 ? N : item_bytes_;
  return put_item<Words>(lane_no, prefix, n, forwarded,
                         [&](std::byte* out) { std::memcpy(out, item, N > 0 ? N : n); });
}

// put_n of this PE's own item of N bytes where its lane has room (false, nothing written, where
// not): no call, for push_routed_sized.
template <std::size_t N, std::size_t Words>
[[gnu::always_inline]] inline bool conveyor_core::put_if_room(int lane_no,
                                                              const std::uint32_t* prefix,
                                                              const std::byte* item) noexcept {
  constexpr std::size_t need = N + 4 * Words;
  cursor& c = cursors_[static_cast<std::size_t>(lane_no)];
  // (room_of: a typed conveyor's cursor ends N - 1 bytes short of its buffer's end.)
  if (MAILROOM_UNLIKELY(need > static_cast<std::size_t>(c.end - c.pos) + N - 1)) return false;
  if constexpr (Words > 0) std::memcpy(c.pos, prefix, 4 * Words);
  std::memcpy(c.pos + 4 * Words, item, N);
  c.pos += need;
  return true;
}

namespace {
// Where this PE's own item for `dest` goes under node or grid routing: put.operator()<Words>(lane,
// prefix) with its lane and its Words prefix words. To a PE of this node directly; on a grid
// [dest][origin]; through a PE of this node the destination; over a link this PE owns the
// destination's index on its node and this PE's (conveyor_core::network_prefix). (`me` by
// reference: loaded on the grid's path only. By value, GCC loaded it first, and the routed send
// saved three registers on every path: 48.5 instructions per send against 45.5.)
template <class Put>
[[gnu::always_inline]] inline bool route_own(const routes& rt, const int& me, int dest, Put put) {
  const node_layout::place w = rt.layout.where(dest);
  const std::uint32_t h = rt.node_hop[static_cast<std::size_t>(w.node)];
  if ((h & routes::k_prefixed) == 0) return put.template operator()<0>(w.local, nullptr);
  const int lane_no = static_cast<int>(h & ((1u << routes::k_lane_bits) - 1));
  if (rt.gridded) {
    const std::uint32_t both[2] = {static_cast<std::uint32_t>(dest),
                                   static_cast<std::uint32_t>(me)};
    return put.template operator()<2>(lane_no, both);
  }
  const std::uint32_t prefix =
      rt.cls[static_cast<std::size_t>(lane_no)] == k_transit
          ? static_cast<std::uint32_t>(dest)
          : static_cast<std::uint32_t>(w.local) | static_cast<std::uint32_t>(rt.my_local) << 16;
  return put.template operator()<1>(lane_no, &prefix);
}
}  // namespace

// A typed item of this PE's, routed.
template <std::size_t N>
bool conveyor_core::push_routed_n(int dest, const void* item) noexcept {
  return route_own(rt_, me_, dest, [&]<std::size_t W>(int lane_no, const std::uint32_t* prefix) {
    return put_n<N, W>(lane_no, prefix, item, false);
  });
}

// push_routed_n's common case, where the item's lane has room for it: a leaf function (the
// send loop's every routed push comes here), so that it saves no registers. A lane without room
// leaves by a tail call to push_routed_full, which makes room or refuses.
// Under node routing (routes::own) without a branch on where the item goes: its prefix is
// written whether it has one or not (an item without one is written over it), and the room
// asked is that of an item with one (a lane with room for the item alone but not for 4 more
// bytes takes the path below, which checks the exact size).
template <std::size_t N>
bool conveyor_core::push_routed_sized(int dest, item_copy<N> c, retry_fn<N> retry) noexcept {
  if (!rt_.gridded) {
    const node_layout::place w = rt_.layout.where(dest);
    const routes::own_hop& o = rt_.own[static_cast<std::size_t>(w.node)];
    const auto local = static_cast<std::uint32_t>(w.local);
    // (Read before the stores, in 64 bits where they index: no reload, no widening.)
    const std::uint32_t transit = o.transit();
    const std::size_t bytes = o.prefix_bytes;
    const std::uint32_t prefix =
        (static_cast<std::uint32_t>(dest) & transit) |
        ((local | static_cast<std::uint32_t>(rt_.my_local) << 16) & ~transit);
    cursor& l = cursors_[std::size_t{o.lane} + std::size_t{local & o.local_mask()}];
    // (room_of: a typed conveyor's cursor ends N - 1 bytes short of its buffer's end.)
    if (MAILROOM_LIKELY(l.end - l.pos >= 5)) {
      std::byte* const out = l.pos;
      std::memcpy(out, &prefix, 4);
      std::memcpy(out + bytes, c.b, N);
      l.pos = out + N + bytes;
      return true;
    }
  } else if (route_own(rt_, me_, dest,
                       [this, c]<std::size_t W>(int lane_no, const std::uint32_t* prefix) {
                         return put_if_room<N, W>(lane_no, prefix, c.b);
                       })) {
    return true;
  }
  return push_routed_full<N>(dest, c, retry);
}
template <std::size_t N>
bool conveyor_core::push_routed_full(int dest, item_copy<N> c, retry_fn<N> retry) noexcept {
  return push_routed_n<N>(dest, c.b) || retry_or_refuse(dest, c, retry);
}
template bool conveyor_core::push_routed_sized<4>(int, item_copy<4>, retry_fn<4>) noexcept;
template bool conveyor_core::push_routed_sized<8>(int, item_copy<8>, retry_fn<8>) noexcept;
template bool conveyor_core::push_routed_sized<12>(int, item_copy<12>, retry_fn<12>) noexcept;
template bool conveyor_core::push_routed_sized<16>(int, item_copy<16>, retry_fn<16>) noexcept;
template bool conveyor_core::push_routed_sized<24>(int, item_copy<24>, retry_fn<24>) noexcept;
template bool conveyor_core::push_routed_sized<32>(int, item_copy<32>, retry_fn<32>) noexcept;

bool conveyor_core::push_routed(int dest, const void* item) noexcept {
  // Copies of fixed size for the sizes messages usually have (as forward_queue).
  switch (item_bytes_) {
    case 4:
      return push_routed_n<4>(dest, item);
    case 8:
      return push_routed_n<8>(dest, item);
    case 12:
      return push_routed_n<12>(dest, item);
    case 16:
      return push_routed_n<16>(dest, item);
    case 24:
      return push_routed_n<24>(dest, item);
    case 32:
      return push_routed_n<32>(dest, item);
    default:
      return push_routed_n<0>(dest, item);
  }
}

// Records with node routing: to a PE of this node delta-coded as ever (a final lane), to another
// node whole, after their destination and origin, in runs [tag][count] (put_record).
template <std::size_t W>
bool conveyor_core::push_delta_routed(int dest, const std::uint32_t& tag,
                                      record_words<W> c) noexcept {
  const std::uint32_t h = rt_.hop(dest);
  const int li = routes::lane_of_hop(h);
  if ((h & routes::k_prefixed) == 0)
    return push_delta_at<W>(lanes_[static_cast<std::size_t>(li)], li, tag, c.data());
  return put_record(li, tag, static_cast<std::uint32_t>(dest), c.data(), 8 * W, false);
}
#define MAILROOM_ROUTED_RECORD(W)                                              \
  template bool conveyor_core::push_delta_routed<W>(int, const std::uint32_t&, \
                                                    record_words<W>) noexcept;
MAILROOM_ROUTED_RECORD(1)
MAILROOM_ROUTED_RECORD(2)
MAILROOM_ROUTED_RECORD(3)
MAILROOM_ROUTED_RECORD(4)
MAILROOM_ROUTED_RECORD(5)
MAILROOM_ROUTED_RECORD(6)
MAILROOM_ROUTED_RECORD(7)
MAILROOM_ROUTED_RECORD(8)
MAILROOM_ROUTED_RECORD(9)
MAILROOM_ROUTED_RECORD(10)
MAILROOM_ROUTED_RECORD(11)
MAILROOM_ROUTED_RECORD(12)
MAILROOM_ROUTED_RECORD(13)
MAILROOM_ROUTED_RECORD(14)
MAILROOM_ROUTED_RECORD(15)
MAILROOM_ROUTED_RECORD(16)
#undef MAILROOM_ROUTED_RECORD
static_assert(conveyor_core::k_delta_words == 16, "one instantiation above per record size");

// Takes a token of pooled lane l's pool (the link pool, or the extra slots), if one is free.
inline bool conveyor_core::take_from_pool(std::size_t l) noexcept {
  if (!(s_->limits_[l].shared ? ex_.take_shared(l) : ex_.take_slot_extra())) return false;
  ++s_->pool_out_[l];
  return true;
}

// Takes a token for one more buffer in flight on lane l, if its pool has one free (a slot lane:
// within its C_node credits).
inline bool conveyor_core::take_token(std::size_t l) noexcept {
  const cold::lane_limit& lim = s_->limits_[l];
  return (lim.shared || (lim.pooled && s_->outstanding_[l] < lim.credits)) && take_from_pool(l);
}

// Whether pooled lane l (shared, or a slot lane to another PE) may take a buffer to fill: on a
// token it holds (its own one while it has no buffer out), else on a token it takes from its
// pool. From a handler, which never waits, always: a spill (the buffer has no token; shipped, it
// waits in the backlog for one, and the scheduler pauses who feeds the mailbox).
inline bool conveyor_core::buffer_for(std::size_t l) noexcept {
  return s_->outstanding_[l] < 1 + s_->pool_out_[l] || take_from_pool(l) || g_may_spill;
}

// Whether lane `lane_no` may ship a buffer now: the own PE has fewer than 2c buffers arrived and
// unhandled (as the reservation counts); another PE of the node fewer than c unacknowledged (a
// slot lane: and fewer than the tokens it holds, or an extra slot free); a lane to another node
// fewer than the tokens it holds (the filling buffer has one) or a token free in the link pool.
// Inline: the idle flush (flush) asks it for every lane with items.
inline bool conveyor_core::can_ship(int lane_no) const noexcept {
  const auto l = static_cast<std::size_t>(lane_no);
  const cold::lane_limit& lim = s_->limits_[l];
  if (rt_.peer[l] == me_) return s_->arrivals_.size() < 2 * static_cast<std::size_t>(lim.credits);
  return s_->outstanding_[l] < in_flight_limit(l) || (lim.shared && ex_.shared_free(l)) ||
         (lim.pooled && s_->outstanding_[l] < lim.credits && ex_.slot_extras_free() > 0);
}

conveyor_core::lane conveyor_core::always_full_lane_{};

std::size_t conveyor_core::table_bytes(const routes& r, bool delta_records) noexcept {
  // Per lane: its cursor and buffer (or delta lane), items, bytes and buffers shipped, credits in
  // use, forwarded items and limits; per link in: whether it has ended (end of stream).
  const std::size_t per_lane =
      (delta_records ? sizeof(lane) : sizeof(cursor) + sizeof(std::byte*)) +
      3 * sizeof(std::int64_t) + 3 * sizeof(std::uint32_t) + sizeof(cold::lane_limit);
  std::size_t links_in = 0;
  for (const auto& peers : r.in_peers) links_in += peers.size();
  return per_lane * static_cast<std::size_t>(r.lanes()) + links_in + sizeof(conveyor_core) +
         sizeof(cold);
}

conveyor_core::conveyor_core(bool delta_records, std::uint32_t signature, std::size_t item_bytes,
                             const team_lanes* team)
    : ex_(running_exchange()),
      rt_(team != nullptr ? *team->rt : ex_.job_routes()),
      over_team_(team != nullptr),
      routed_(rt_.routed),
      item_bytes_(delta_records ? 0 : item_bytes),
      id_(0),
      capacity_(static_cast<std::uint32_t>(ex_.capacity())),
      me_(ex_.me()),
      cursors_(delta_records ? 0 : static_cast<std::size_t>(rt_.lanes())),
      lanes_(delta_records ? static_cast<std::size_t>(rt_.lanes()) : 0),
      signature_(signature),
      s_(std::make_unique<cold>(rt_)) {
  // Every PE creates the same conveyors in the same order with the same configuration, so the
  // credits agree: what a sender may have in flight is what the receiver reserved for arrivals.
  const std::size_t left = ex_.budget_left();
  if (over_team_) {
    // Over a team: every lane from the heap with MAILROOM_CREDITS credits, or none at all (the
    // members reserve alike whatever else each has). Lanes to other nodes too, with no link
    // pool: all count as lanes within the node outside the shared pool.
    const mailbox_shape s = shape_of(rt_, [](int) { return true; });
    s_->taken_ = ex_.reserve_team(s);
    MAILROOM_CHECK(s_->taken_.credits > 0,
                   "a mailbox over a team of {} PEs does not fit in MAILROOM_BUDGET_BYTES={}: it "
                   "needs {} bytes (MAILROOM_CREDITS={} buffers per member each way), but only {} "
                   "bytes are left next to the {} live mailboxes, the shared pool and the posted "
                   "receives (raise the budget, lower MAILROOM_BUFFER_BYTES or MAILROOM_CREDITS)",
                   rt_.lanes(), current_config().budget_bytes,
                   mailbox_reservation(s, capacity_, current_config().credits, false),
                   current_config().credits, left, ex_.live_conveyors());
    for (auto& lim : s_->limits_) lim.credits = s_->taken_.credits;
  } else {
    s_->taken_ = ex_.reserve();
  }
  MAILROOM_CHECK(s_->taken_.credits > 0,
                 "mailbox #{} does not fit in MAILROOM_BUDGET_BYTES={}: a mailbox needs at least "
                 "3 buffers per link within the node outside the shared pool (one filling, one in "
                 "flight, one arrived) and 2 per link to another node: {} bytes over its {} lanes, "
                 "but only {} bytes are left next to the {} live mailboxes, the shared "
                 "pool and the posted receives (raise the budget, lower MAILROOM_BUFFER_BYTES, or "
                 "route with fewer links: MAILROOM_ROUTING=node or mesh)",
                 ex_.live_conveyors(), current_config().budget_bytes,
                 mailbox_reservation(ex_.shape(), capacity_, 1, false), dests(), left,
                 ex_.live_conveyors());
  const auto node_offset = static_cast<std::uint32_t>(capacity_ - ex_.node_capacity());
  for (std::size_t l = 0; l < s_->limits_.size() && !over_team_; ++l) {
    cold::lane_limit& lim = s_->limits_[l];
    lim.slot = s_->taken_.in_slots && ex_.on_node(rt_.peer[l]);
    lim.offset = lim.slot ? node_offset : 0;
    // A lane to another node: one buffer of its own (one credit), more on tokens of the link
    // pool (reserved once for all conveyors: docs/design.md, flow control); a slot lane to
    // another PE: its own slot, more on the pool's extras, within C_node credits.
    lim.shared = !ex_.on_node(rt_.peer[l]);
    lim.pooled = lim.slot && rt_.peer[l] != me_;
    lim.credits = lim.slot ? s_->taken_.node_credits : lim.shared ? 1 : s_->taken_.credits;
  }
  MAILROOM_ASSERT(capacity_ >= k_header_bytes + k_delta_run_header + 8 * k_delta_words);
  // A lane without a buffer has a null cursor and end: the first push for a destination takes
  // the slow path.
  s_->bufs_.assign(cursors_.size(), nullptr);
  by_dest_ = cursors_.data();
  by_dest_lane_ = lanes_.data();
  if (routed_) {
    // A cursor of zeros per destination, on pages mapped read-only: they all share the zero
    // page, so the table costs address space, not memory, however many PEs there are.
    if (lanes_.empty()) {
      zero_bytes_ = static_cast<std::size_t>(rt_.pes) * sizeof(cursor);
      zero_cursors_ = map_zeros(zero_bytes_);
      by_dest_ = static_cast<cursor*>(zero_cursors_);
    }
    by_dest_lane_ = &always_full_lane_;
    dest_mask_ = 0;
  }
  if (over_team_) {
    id_ = team->id;
    ex_.attach_team(this, id_);
    return;
  }
  id_ = ex_.attach(this);
  // A mailbox the shared pool has no room for costs far more (its buffers within the node come
  // from the budget, full size, on both ends): say so once per mailbox where asked.
  if (!s_->taken_.in_slots && ex_.shared_slots() > 0 && me_ == 0 && current_config().verbose > 0)
    std::fprintf(stderr,
                 "mailroom: mailbox #%u: no room in the shared pool (%u slots per PE); its "
                 "buffers within the node take %zu bytes of the budget per PE instead (raise "
                 "MAILROOM_SHARED_SLOTS)\n",
                 id_, ex_.shared_slots(),
                 mailbox_reservation(ex_.shape(), capacity_, s_->taken_.credits, false) -
                     mailbox_reservation(ex_.shape(), capacity_, s_->taken_.credits, true));
}

conveyor_core::~conveyor_core() {
  for (std::size_t d = 0; d < dests(); ++d)
    if (std::byte* buf = buffer_of(d); buf != nullptr) ex_.release(buf);
  if (zero_cursors_ != nullptr) unmap_zeros(zero_cursors_, zero_bytes_);
  for (auto& a : s_->arrivals_) ex_.release_arrival(a.source, a.buf);
  for (auto& queue : s_->forward_)
    for (auto& t : queue) ex_.release_arrival(t.source, t.buf);
  for (auto& [lane_no, buf] : s_->backlog_) ex_.release(buf);
  ex_.backlog_changed(-static_cast<int>(s_->backlog_.size()));
  // Acknowledgements still to come are dropped on arrival (this conveyor is gone); those for
  // buffers on tokens of the link pool give them back there (other tokens go back at once).
  // Extra slots go back at once too (a slot still on its way back is free again soon: until
  // then a lane that finds none free takes a heap buffer).
  ex_.unacknowledged -= unacknowledged();
  for (std::size_t l = 0; l < s_->pool_out_.size(); ++l) {
    if (s_->pool_out_[l] == 0) continue;
    if (s_->limits_[l].shared) {
      const std::uint32_t owed = std::min(s_->pool_out_[l], s_->outstanding_[l]);
      ex_.owe_shared(l, owed);
      if (s_->pool_out_[l] > owed) ex_.give_shared(l, s_->pool_out_[l] - owed);
    } else {
      ex_.give_slot_extra(s_->pool_out_[l]);
    }
  }
  ex_.release(s_->taken_);
  ex_.add_ended(*this);
  ex_.detach(id_);
}

std::byte* conveyor_core::buffer_of(std::size_t l) const noexcept {
  if (lanes_.empty()) return s_->bufs_[l];
  const lane& ln = lanes_[l];
  return ln.rs.buf == nullptr ? nullptr : ln.rs.buf + s_->limits_[l].offset;
}

std::uint32_t conveyor_core::bytes_of_lane(std::size_t l) const noexcept {
  if (lanes_.empty()) return static_cast<std::uint32_t>(cursors_[l].pos - s_->bufs_[l]);
  return used(lanes_[l]) - s_->limits_[l].offset;
}

std::uint32_t conveyor_core::items_of(std::size_t l) const noexcept {
  if (!lanes_.empty()) return records(lanes_[l]);
  const std::byte* buf = s_->bufs_[l];
  if (buf == nullptr) return 0;
  // Every item on a lane has the same prefix: none on a final lane, the origin on a delivery
  // lane, [dest][origin] on grid routing's forwarding lanes, one word on node routing's.
  const std::uint32_t cls = rt_.cls[l];
  const std::size_t prefix = cls == k_final ? 0 : cls == k_delivery || !rt_.gridded ? 4 : 8;
  const auto bytes = static_cast<std::size_t>(cursors_[l].pos - buf) - k_header_bytes;
  if (item_bytes_ > 0) return static_cast<std::uint32_t>(bytes / (prefix + item_bytes_));
  // Variable-size items: counted by their length words, once per buffer (not per push).
  std::uint32_t n = 0;
  for (std::size_t at = 0; at < bytes; ++n) {
    std::uint32_t len;
    std::memcpy(&len, buf + k_header_bytes + at + prefix, 4);
    at += prefix + var_item_bytes(len);
  }
  return n;
}

bool conveyor_core::has_items(std::size_t l) const noexcept {
  if (lanes_.empty())
    return s_->bufs_[l] != nullptr && cursors_[l].pos != s_->bufs_[l] + k_header_bytes;
  return lanes_[l].rs.buf != nullptr && records(lanes_[l]) > 0;
}

bool conveyor_core::make_room(int lane_no, std::size_t need) noexcept {
  const auto l = static_cast<std::size_t>(lane_no);
  // After a lane has ended every buffer has been shipped, so any later push lands here.
  MAILROOM_CHECK((s_->lanes_ended_ >> rt_.cls[l] & 1u) == 0 &&
                     (s_->state_ == stream::open || s_->state_ == stream::flushing),
                 "a message was sent to mailbox #{} after its end of stream on this PE "
                 "(send after done, or a missing edge in the dependency graph)",
                 id_);
  if (has_items(l)) {
    if (!g_may_spill && !can_ship(lane_no)) {
      ++s_->refused_;
      return false;
    }
    ship(lane_no);
  }
  if (buffer_of(l) == nullptr) {
    // A lane to another node or slot lane to another PE fills its own buffer or one on a token
    // of its pool (buffer_for); without one the push waits for a buffer to come back, as for a
    // credit. A slot lane whose pool has none free (after spills) takes a heap buffer and uses
    // the same bytes of it; sent through MPI.
    const cold::lane_limit& lim = s_->limits_[l];
    if ((lim.shared || lim.pooled) && !buffer_for(l)) {
      ++s_->refused_;
      return false;
    }
    std::byte* buf = lim.slot ? ex_.acquire_slot(rt_.peer[l]) : nullptr;
    if (buf == nullptr) buf = ex_.acquire();
    if (lanes_.empty()) {
      s_->bufs_[l] = buf;
      cursors_[l] = {buf + k_header_bytes,
                     buf + (capacity_ - lim.offset) - std::max<std::size_t>(item_bytes_, 1) + 1};
    } else {  // runs restart
      attach(lanes_[l], buf - lim.offset, lim.offset + static_cast<std::uint32_t>(k_header_bytes),
             capacity_);
    }
  }
  MAILROOM_CHECK(bytes_of_lane(l) + need <= capacity_ - s_->limits_[l].offset,
                 "a message of {} bytes does not fit in {}={} ({} bytes of each buffer are its "
                 "header): raise MAILROOM_BUFFER_BYTES (and MAILROOM_NODE_BUFFER_BYTES for "
                 "buffers within a node) or send less",
                 need,
                 s_->limits_[l].offset > 0 ? "MAILROOM_NODE_BUFFER_BYTES" : "MAILROOM_BUFFER_BYTES",
                 capacity_ - s_->limits_[l].offset, k_header_bytes);
  return true;
}

// make_room for put: a forwarded item never spills, and its refusal is not the program's.
bool conveyor_core::room_for(int lane_no, std::size_t need, bool forwarded) noexcept {
  // Forwarding never spills: it waits for the credit, keeping the buffer it forwards from (and
  // so its sender's credit) until then.
  bool room;
  {
    const scoped_assign no_spill(g_may_spill, g_may_spill && !forwarded);
    room = make_room(lane_no, need);
  }
  if (!room && forwarded) --s_->refused_;  // (refusals count the program's pushes only)
  return room;
}

void conveyor_core::bad_forward(int source, std::uint32_t dest) const noexcept {
  MAILROOM_FAIL(
      "mailbox #{}: PE {} sent an item for PE {} through this PE, which does not lead "
      "there (is MAILROOM_ROUTING or MAILROOM_NODE_SIZE set differently on the PEs?)",
      id_, source, dest);
}

bool conveyor_core::push_whole_routed(int dest, const std::uint32_t& tag, const void* payload,
                                      std::size_t n, std::size_t stride) noexcept {
  const std::uint32_t h = rt_.hop(dest);
  const int li = routes::lane_of_hop(h);
  if ((h & routes::k_prefixed) != 0)
    return put_record(li, tag, static_cast<std::uint32_t>(dest), payload, n, false, 0, stride);
  lane& ln = lanes_[static_cast<std::size_t>(li)];
  if (!fits(ln, 8 + stride) && !make_room(li, 8 + stride)) return false;
  if (ln.open != key_of(tag)) open_run(ln, tag);
  std::byte* out = ln.pos;
  ln.pos = out + stride;
  std::memcpy(out, payload, n);
  ++ln.rs.run_items;
  return true;
}

bool conveyor_core::put_record(int lane_index, std::uint32_t tag, std::uint32_t dest,
                               const void* data, std::size_t n, bool forwarded,
                               std::uint32_t origin, std::size_t stride) noexcept {
  if (stride == 0) stride = n;
  const auto li = static_cast<std::size_t>(lane_index);
  lane& ln = lanes_[li];
  const std::size_t need = 8 + 8 + stride;  // a run's header, [dest][origin], the record
  if (MAILROOM_UNLIKELY(!fits(ln, need))) {
    bool room;
    {
      const scoped_assign no_spill(g_may_spill, g_may_spill && !forwarded);
      room = make_room(lane_index, need);
    }
    if (!room) {
      if (forwarded) --s_->refused_;
      return false;
    }
  }
  // Runs of routed lanes are keyed by the tag's value (odd: never a tag's address).
  const std::uintptr_t key = std::uintptr_t{tag} << 1 | 1u;
  if (ln.open != key) open_run(ln, tag, key);
  std::byte* out = ln.pos;
  ln.pos = out + 8 + stride;
  ++ln.rs.run_items;
  const std::uint32_t prefix[2] = {dest, forwarded ? origin : static_cast<std::uint32_t>(me_)};
  std::memcpy(out, prefix, 8);
  // (copy_small: a forwarder's records come by a size known only at run time, where memcpy
  // would call the C library per record.)
  copy_small(out + 8, static_cast<const std::byte*>(data), n);
  if (forwarded) {
    ++s_->forwarded_in_[li];
    ++s_->forwarded_items_;
  }
  return true;
}

void conveyor_core::ship(int lane_no) noexcept {
  const auto l = static_cast<std::size_t>(lane_no);
  if (!lanes_.empty()) close_run(lanes_[l]);
  const std::uint32_t offset = s_->limits_[l].offset;
  std::byte* buf = buffer_of(l);
  const std::uint32_t items = items_of(l);
  auto* h = reinterpret_cast<buffer_header*>(buf);
  *h = buffer_header{id_, bytes_of_lane(l), items, 0, signature_, link_flags(rt_.cls[l])};
  s_->sent_to_[l] += items;
  s_->bytes_to_[l] += h->bytes - static_cast<std::int64_t>(k_header_bytes);
  s_->room_sent_ += capacity_ - offset - static_cast<std::int64_t>(k_header_bytes);
  ++s_->buffers_to_[l];
  // Only this PE's own items count as sent (mr::quiesce, the waves of cycles): forwarded ones
  // were counted where they came from. A delivery lane's are all forwarded (forward_run does not
  // count them one by one); other lanes count theirs.
  std::int64_t own = items;
  if (routed_) {
    MAILROOM_ASSERT(s_->forwarded_in_[l] <= items);
    own = rt_.cls[l] == k_delivery ? 0 : own - s_->forwarded_in_[l];
    s_->forwarded_in_[l] = 0;
  }
  s_->sent_items_ += own;
  ex_.items_shipped += own;
  const int dest = rt_.peer[l];
  if (MAILROOM_UNLIKELY(trace::g_on))
    trace::record(trace::builtin().ship, trace::now(), -1, {dest, id_, h->items, h->bytes});
  if (dest == me_) {
    deliver(me_, buf);  // own PE: no MPI
  } else if (s_->outstanding_[l] < in_flight_limit(l) || take_token(l)) {
    ++s_->outstanding_[l];
    ++ex_.unacknowledged;
    ex_.send(dest, buf);
  } else {
    s_->backlog_.emplace_back(lane_no, buf);
    ex_.backlog_changed(+1);
  }
  if (lanes_.empty()) {
    s_->bufs_[l] = nullptr;
    cursors_[l] = {};
  } else {
    detach(lanes_[l]);
  }
}

bool conveyor_core::flush(bool force) {
  bool all = s_->hop_held_ == 0 || flush_hops();
  for (std::size_t d = 0; d < dests(); ++d) {
    if (!has_items(d)) continue;
    if (!force && !can_ship(static_cast<int>(d))) {
      all = false;
      continue;
    }
    ship(static_cast<int>(d));
  }
  return all;
}

void conveyor_core::credit(int peer, std::uint32_t cls) noexcept {
  const int lane_no = rt_.lane(cls, peer);
  MAILROOM_CHECK(lane_no >= 0 && s_->outstanding_[static_cast<std::size_t>(lane_no)] > 0,
                 "mailbox #{}: an acknowledgement from PE {} (link class {}) for no buffer sent",
                 id_, peer, cls);
  const auto l = static_cast<std::size_t>(lane_no);
  --s_->outstanding_[l];
  --ex_.unacknowledged;
  // A token the lane no longer needs (it holds no more buffers than its own and its tokens
  // less one) goes back to its pool, where any conveyor may take it.
  if (s_->pool_out_[l] > 0 &&
      s_->outstanding_[l] + (buffer_of(l) != nullptr ? 1u : 0u) < 1 + s_->pool_out_[l]) {
    --s_->pool_out_[l];
    if (s_->limits_[l].shared)
      ex_.give_shared(l);
    else
      ex_.give_slot_extra();
  }
  retry_backlog(lane_no);
}

void conveyor_core::retry_backlog(int only) noexcept {
  for (auto it = s_->backlog_.begin(); it != s_->backlog_.end();) {
    const auto l = static_cast<std::size_t>(it->first);
    if (only >= 0 && it->first != only) {
      ++it;
      continue;
    }
    if (!(s_->outstanding_[l] < in_flight_limit(l) || take_token(l))) {
      if (only >= 0) return;  // (in order: the lane's next buffers wait as well)
      ++it;
      continue;
    }
    std::byte* buf = it->second;
    it = s_->backlog_.erase(it);
    ex_.backlog_changed(-1);
    ++s_->outstanding_[l];
    ++ex_.unacknowledged;
    ex_.send(rt_.peer[l], buf);
  }
}

void conveyor_core::deliver(int source, std::byte* buf) noexcept {
  const auto& h = *reinterpret_cast<const buffer_header*>(buf);
  s_->received_items_ += h.items;
  s_->arrivals_.push_back(arrival{buf, source, link_class_of(h.flags) == k_delivery,
                                  over_team_ ? rt_.rank_of(source) : source});
}

void conveyor_core::deliver_transit(int source, std::byte* buf, std::uint32_t cls) noexcept {
  MAILROOM_CHECK(routed_ && forwarded_class(cls) && stage_of(cls) < rt_.stages,
                 "mailbox #{}: PE {} forwards items through this PE, which does not route them "
                 "(is MAILROOM_ROUTING or MAILROOM_NODE_SIZE set differently on the PEs?)",
                 id_, source);
  s_->received_[cls] += reinterpret_cast<const buffer_header*>(buf)->items;
  if (!forwarding()) ex_.forward_later(this);
  s_->forward_[cold::queue_of(cls)].push_back(cold::transit{buf, source});
}

bool conveyor_core::forward() noexcept {
  // Later stages first: they are nearer the PEs' handlers, which never wait.
  // (Per stage, the network's queue before the transit's: a higher class first.)
  bool any = false;
  for (std::size_t q = s_->forward_.size(); q-- > 0;) any = forward_queue(q) || any;
  return any;
}

// Appends a variable-size item to `lane_no` after Words 4-byte prefix words, as put_n does.
template <std::size_t Words>
bool conveyor_core::put_var(int lane_no, const std::uint32_t* prefix, const void* payload,
                            std::uint32_t len, bool forwarded) noexcept {
  const std::size_t n = var_item_bytes(len);
  return put_item<Words>(lane_no, prefix, n, forwarded,
                         [&](std::byte* out) { write_var(out, payload, len, n); });
}

// Node routing's next hop for a forwarded item from `source`: the routes' tables read once (per
// buffer) into this value, which a loop keeps in registers where members would be reloaded after
// every copy (a copy may alias them). `from`: the sender's index on this node (transit); `far`:
// the sender's node (from the network; -1 if unused).
struct conveyor_core::node_step {
  const conveyor_core& c;
  int source;
  std::uint32_t from;
  std::uint32_t pes;
  node_layout::locator where;
  const std::uint32_t* node_hop;
  const std::uint8_t* cls;
  std::uint32_t members;
  int delivery;
  std::uint32_t far_size;
  node_layout::members_view origins;
  node_step(const conveyor_core& conv, int src, std::uint32_t from_local, int far) noexcept
      : c(conv),
        source(src),
        from(from_local),
        pes(static_cast<std::uint32_t>(conv.rt_.pes)),
        where(conv.rt_.layout.locate()),
        node_hop(conv.rt_.node_hop.data()),
        cls(conv.rt_.cls.data()),
        members(static_cast<std::uint32_t>(conv.rt_.node_members.size())),
        delivery(conv.rt_.delivery_base),
        far_size(far < 0 ? 0 : static_cast<std::uint32_t>(conv.rt_.layout.size(far))),
        origins(far < 0 ? node_layout::members_view{} : conv.rt_.layout.members_of(far)) {}
  // A transit item for PE `dest`: the network lane of its node and the prefix there, the two
  // indices (checked: the job stops on an item that leads nowhere from here). With the layout's
  // form a constant (F), where a loop over a buffer calls it: no branch on the form per item.
  [[nodiscard]] std::pair<int, std::uint32_t> transit(std::uint32_t dest) const noexcept {
    return transit_in(where.f, dest);
  }
  template <class F = node_layout::form>
  [[nodiscard]] std::pair<int, std::uint32_t> transit_in(F f, std::uint32_t dest) const noexcept {
    if (MAILROOM_UNLIKELY(dest >= pes)) c.bad_forward(source, dest);
    const node_layout::place at =
        node_layout::where_by(f, where.div, where.node_of, where.local_of, static_cast<int>(dest));
    const std::uint32_t h = node_hop[static_cast<std::size_t>(at.node)];
    const int lane = routes::lane_of_hop(h);
    if (MAILROOM_UNLIKELY((h & routes::k_prefixed) == 0 ||
                          cls[static_cast<std::size_t>(lane)] != k_network))
      c.bad_forward(source, dest);
    return {lane, static_cast<std::uint32_t>(at.local) | from << 16};
  }
  // An item from the network with prefix `w`: its delivery lane and its origin PE (checked).
  // Listed: whether the far node's PEs are a list (the table form), else a formula.
  [[nodiscard]] std::pair<int, std::uint32_t> network(std::uint32_t w) const noexcept {
    return origins.list != nullptr ? network<true>(w) : network<false>(w);
  }
  template <bool Listed>
  [[nodiscard]] std::pair<int, std::uint32_t> network(std::uint32_t w) const noexcept {
    const std::uint32_t dest_local = w & 0xffffu, origin_local = w >> 16;
    if (MAILROOM_UNLIKELY(dest_local >= members || origin_local >= far_size))
      c.bad_forward(source, w);
    const auto i = static_cast<int>(origin_local);
    return {delivery + static_cast<int>(dest_local),
            static_cast<std::uint32_t>(Listed ? origins.list[i] : origins.base + i * origins.step)};
  }
};

// Typed items of N bytes (0: item_bytes_, copied by size at run time).
template <std::size_t N>
struct conveyor_core::fixed_items {
  std::size_t n;
  [[nodiscard]] std::size_t bytes(const std::byte* /*item*/) const noexcept {
    return N > 0 ? N : n;
  }
  template <std::size_t Words>
  bool put(conveyor_core& c, int lane_no, const std::uint32_t* prefix,
           const std::byte* item) const noexcept {
    return c.put_n<N, Words>(lane_no, prefix, item, true);
  }
};

// Variable-size items: each steps by its own length word.
struct conveyor_core::var_items {
  [[nodiscard]] static std::uint32_t length(const std::byte* item) noexcept {
    std::uint32_t len;
    std::memcpy(&len, item, 4);
    return len;
  }
  [[nodiscard]] std::size_t bytes(const std::byte* item) const noexcept {
    return var_item_bytes(length(item));
  }
  template <std::size_t Words>
  bool put(conveyor_core& c, int lane_no, const std::uint32_t* prefix,
           const std::byte* item) const noexcept {
    return c.put_var<Words>(lane_no, prefix, item + 8, length(item), true);
  }
};

// Node routing's typed items of one buffer from [p, end), the usual case, in one loop per queue
// and layout form (Form: from a transit lane, the layout's form as a constant; from the network,
// whether the far node's PEs are listed): each item's lane and prefix (the routes' tables,
// copied in `s`, stay in registers), then its copy. Items are counted once per run, and only
// transit items per lane: a network lane carries this PE's own items too, which ship() tells
// from forwarded ones by that count; a delivery lane carries forwarded items only. Returns where
// it stopped: at end, or at an item whose lane had no room.
template <bool Transit, class Form, class Items>
const std::byte* conveyor_core::forward_run(const std::byte* p, const std::byte* end, Items items,
                                            const node_step& step, std::int64_t& moved) noexcept {
  const node_step s = step;
  const std::size_t n = items.bytes(nullptr);
  const std::size_t need = 4 + n;
  // A lane has room for `need` bytes when its cursor's end is at least this far (room_of; the
  // end is set for items without a prefix, so a full lane's position may be past it: signed).
  const auto reach =
      static_cast<std::ptrdiff_t>(need - (std::max<std::size_t>(item_bytes_, 1) - 1));
  cursor* const lanes = cursors_.data();
  std::uint32_t* const in = s_->forwarded_in_.data();
  const std::byte* const from = p;
  for (; p < end; p += need) {
    std::uint32_t w;
    std::memcpy(&w, p, 4);
    const auto [lane_no, prefix] = [&] {
      if constexpr (Transit)
        return s.transit_in(Form{}, w);
      else
        return s.template network<Form::value>(w);
    }();
    cursor& c = lanes[lane_no];
    if (MAILROOM_UNLIKELY(c.end - c.pos < reach) && !room_for(lane_no, need, true)) break;
    std::byte* const out = c.pos;
    std::memcpy(out, &prefix, 4);
    std::memcpy(out + 4, p + 4, n);
    c.pos = out + need;
    if constexpr (Transit) ++in[lane_no];
  }
  moved += static_cast<std::int64_t>(static_cast<std::size_t>(p - from) / need);
  return p;
}

// Forwards what it can of the items of queue q (cold::queue_of: under node routing 0 from transit
// lanes, 1 from the network), each after its prefix; `Items` says how long an
// item is and appends it: typed items of one size, or variable-size ones.
// Node routing (a 4-byte prefix): from a transit lane to the network lane of its destination's
// node with the two indices, from the network to its destination's delivery lane with its
// origin PE. Grid routing ([dest][origin]): to the lane grid_next names, with both, or its origin
// alone on a delivery lane.
template <class Items>
bool conveyor_core::forward_items(std::size_t q, Items items) noexcept {
  const bool mesh = rt_.gridded;
  const std::size_t prefix_bytes = mesh ? 8 : 4;
  // Message reductions at this hop (typed items of a reducing mailbox): folded or held.
  const bool fold = !std::is_same_v<Items, var_items> && s_->hop_slots_ > 0;
  const std::uint32_t cls = cold::queue_class(q);
  bool any = false;
  auto& queue = s_->forward_[q];
  std::uint32_t& at = s_->forward_at_[q];
  while (!queue.empty()) {
    const auto& t = queue.front();
    const std::byte* p = t.buf + k_header_bytes + at;
    const std::byte* end = t.buf + reinterpret_cast<const buffer_header*>(t.buf)->bytes;
    // Per buffer: the sender's index on this node (transit), or its node (network).
    const std::uint32_t from = !mesh && q == 0 ? transit_origin(t.source) : 0;
    const int far = !mesh && q == 1 ? far_node_of(t.source) : -1;
    if constexpr (!std::is_same_v<Items, var_items>) {
      if (!mesh && !fold) {
        // Node routing's typed items, the usual case: one loop per queue (forward_run).
        const node_step step(*this, t.source, from, far);
        std::int64_t moved = 0;
        using form = node_layout::form;
        const auto run = [&]<bool Transit, class Form>(std::bool_constant<Transit>, Form) {
          return forward_run<Transit, Form>(p, end, items, step, moved);
        };
        if (q == 0) {
          switch (step.where.f) {
            case form::blocked:
              p = run(std::true_type{}, std::integral_constant<form, form::blocked>{});
              break;
            case form::cyclic:
              p = run(std::true_type{}, std::integral_constant<form, form::cyclic>{});
              break;
            default:
              p = run(std::true_type{}, std::integral_constant<form, form::table>{});
          }
        } else if (step.origins.list != nullptr) {
          p = run(std::false_type{}, std::true_type{});
        } else {
          p = run(std::false_type{}, std::false_type{});
        }
        const bool stopped = p < end;
        at = static_cast<std::uint32_t>(p - (t.buf + k_header_bytes));
        s_->forwarded_items_ += moved;
        any = any || moved > 0;
        if (stopped) return any;
        forwarded_front(q);
        any = true;
        continue;
      }
    }
    const node_step step(*this, t.source, from, far);
    while (p < end) {
      const std::byte* item = p + prefix_bytes;
      const std::size_t stride = prefix_bytes + items.bytes(item);
      bool put_it;
      if (mesh) {
        std::uint32_t both[2];
        std::memcpy(both, p, 8);
        const int lane_no = grid_next(cls, t.source, both[0], both[1]);
        const bool last = rt_.cls[static_cast<std::size_t>(lane_no)] == k_delivery;
        put_it = fold ? hop_fold(lane_no, last ? 1 : 2, last ? &both[1] : both, item, both[0], cls)
                 : last ? items.template put<1>(*this, lane_no, &both[1], item)
                        : items.template put<2>(*this, lane_no, both, item);
      } else {
        std::uint32_t w;
        std::memcpy(&w, p, 4);
        if (q == 0) {
          const auto [lane_no, prefix] = step.transit(w);
          put_it = fold ? hop_fold(lane_no, 1, &prefix, item, w, cls)
                        : items.template put<1>(*this, lane_no, &prefix, item);
        } else {
          const auto [lane_no, origin] = step.network(w);
          put_it =
              fold ? hop_fold(
                         lane_no, 1, &origin, item,
                         static_cast<std::uint32_t>(rt_.peer[static_cast<std::size_t>(lane_no)]),
                         cls)
                   : items.template put<1>(*this, lane_no, &origin, item);
        }
      }
      if (!put_it) return any;
      p += stride;
      at += static_cast<std::uint32_t>(stride);
      any = true;
    }
    forwarded_front(q);
    any = true;
  }
  return any;
}

std::size_t conveyor_core::forward_backlog() const noexcept {
  std::size_t n = 0;
  for (const auto& q : s_->forward_) n += q.size();
  return n;
}

bool conveyor_core::forward_queue(std::size_t q) noexcept {
  if (!lanes_.empty()) return forward_records(q);
  // Copies of fixed size for the sizes messages usually have.
  switch (item_bytes_) {
    case 0:
      return forward_items(q, var_items{});
    case 4:
      return forward_items(q, fixed_items<4>{4});
    case 8:
      return forward_items(q, fixed_items<8>{8});
    case 12:
      return forward_items(q, fixed_items<12>{12});
    case 16:
      return forward_items(q, fixed_items<16>{16});
    case 24:
      return forward_items(q, fixed_items<24>{24});
    case 32:
      return forward_items(q, fixed_items<32>{32});
    default:
      return forward_items(q, fixed_items<0>{item_bytes_});
  }
}

std::size_t conveyor_core::var_room() const noexcept {
  // The smallest buffer less its header, the longest routing prefix ([dest][origin]) and the
  // length word; payloads are padded to 8.
  const std::size_t smallest = std::min<std::size_t>(capacity_, ex_.node_capacity());
  return (smallest - k_header_bytes - 16) & ~std::size_t{7};
}

bool conveyor_core::push_var_routed(int dest, const void* payload, std::uint32_t len) noexcept {
  const std::uint32_t h = rt_.hop(dest);
  if ((h & routes::k_prefixed) == 0)
    return put_var<0>(static_cast<int>(h), nullptr, payload, len, false);
  const int lane_no = routes::lane_of_hop(h);
  if (rt_.gridded) {
    const std::uint32_t both[2] = {static_cast<std::uint32_t>(dest),
                                   static_cast<std::uint32_t>(me_)};
    return put_var<2>(lane_no, both, payload, len, false);
  }
  const std::uint32_t prefix = rt_.cls[static_cast<std::size_t>(lane_no)] == k_transit
                                   ? static_cast<std::uint32_t>(dest)
                                   : network_prefix(h, static_cast<std::uint32_t>(rt_.my_local));
  return put_var<1>(lane_no, &prefix, payload, len, false);
}

namespace {
// Node routing: the delivery lane of PE `dest`, from the layout (no search, no call), or -1
// when `dest` is not a PE of this node.
inline int delivery_lane(const routes& rt, std::uint32_t dest) noexcept {
  if (dest >= static_cast<std::uint32_t>(rt.pes)) return -1;
  const node_layout::place w = rt.layout.where(static_cast<int>(dest));
  if ((rt.node_hop[static_cast<std::size_t>(w.node)] & routes::k_prefixed) != 0) return -1;
  return rt.delivery_base + w.local;
}
}  // namespace

// The lane a lambda record for `dest` from queue q goes on to (checked: the job stops on one
// that leads nowhere from here).
int conveyor_core::next_lane(std::size_t q, int source, std::uint32_t dest,
                             std::uint32_t origin) const noexcept {
  if (rt_.gridded) return grid_next(cold::queue_class(q), source, dest, origin);
  // From a transit lane to the network lane for the destination's node, as it came; from the
  // network to the destination, with its origin only.
  if (q == 0) return node_step(*this, source, 0, -1).transit(dest).first;
  const int lane_no = delivery_lane(rt_, dest);
  if (MAILROOM_UNLIKELY(lane_no < 0)) bad_forward(source, dest);
  return lane_no;
}

// Grid routing: the lane an item for `dest` from `origin` that came over a link of class `cls`
// from `source` goes on to: its delivery lane when it has reached its node, else the hop
// table's, which must be of a later stage (checked).
int conveyor_core::grid_next(std::uint32_t cls, int source, std::uint32_t dest,
                             std::uint32_t origin) const noexcept {
  const auto pes = static_cast<std::uint32_t>(rt_.pes);
  if (MAILROOM_UNLIKELY(dest >= pes || origin >= pes)) bad_forward(source, dest);
  const std::uint32_t h = rt_.hop(static_cast<int>(dest));
  if ((h & routes::k_prefixed) == 0) {  // on this node: delivered, from the network only
    if (MAILROOM_UNLIKELY(!network_link(cls))) bad_forward(source, dest);
    return rt_.delivery_base + static_cast<int>(h);
  }
  const int lane_no = routes::lane_of_hop(h);
  // The classes are numbered in the order of their stages (then delivery, above).
  if (MAILROOM_UNLIKELY(rt_.cls[static_cast<std::size_t>(lane_no)] <= cls))
    bad_forward(source, dest);
  return lane_no;
}

// The index on this node of the sender of a transit buffer (checked).
std::uint32_t conveyor_core::transit_origin(int source) const noexcept {
  // A PE of this node: its own items' hop is its final lane, whose index is its index here.
  const std::uint32_t h = rt_.hop(source);
  if (MAILROOM_UNLIKELY((h & routes::k_prefixed) != 0)) bad_forward(source, 0);
  return h;
}

// The node a network buffer from `source` comes from (checked: a network link in).
int conveyor_core::far_node_of(int source) const noexcept {
  if (MAILROOM_UNLIKELY(rt_.in_link(k_network, source) < 0)) bad_forward(source, 0);
  return rt_.layout.node(source);
}

// The front buffer of queue q is forwarded: acknowledge it.
void conveyor_core::forwarded_front(std::size_t q) {
  const cold::transit done = s_->forward_[q].front();
  s_->forward_[q].pop_front();
  s_->forward_at_[q] = 0;
  ex_.handled(done.source, done.buf, id_);
}

// Records go on whole, run by run: a run [tag][count] of records [dest][origin][words] that
// the next lane starts again where the tag changes. A buffer whose forwarding stopped halfway
// through a run resumes there (s_->forward_at_, s_->run_left_, s_->run_tag_). Per run, the
// records' size is asked once and the place in the buffer kept in locals (the stores into the
// lanes may alias the cold state); per record, the next lane (node routing from the network:
// the delivery lane of the destination's index here, without a call).
bool conveyor_core::forward_records(std::size_t q) noexcept {
  MAILROOM_CHECK(record_bytes_ != nullptr,
                 "mailbox #{}: records to forward, but no record size "
                 "is known for them",
                 id_);
  bool any = false;
  auto& queue = s_->forward_[q];
  const bool delivered = !rt_.gridded && q == 1;  // node routing, from the network
  while (!queue.empty()) {
    const cold::transit& t = queue.front();
    const auto& h = *reinterpret_cast<const buffer_header*>(t.buf);
    const std::byte* base = t.buf + k_header_bytes;
    const std::uint32_t end = h.bytes - static_cast<std::uint32_t>(k_header_bytes);
    std::uint32_t at = s_->forward_at_[q];
    std::uint32_t left = s_->run_left_[q];
    while (at < end || left > 0) {
      if (left == 0) {
        std::memcpy(&s_->run_tag_[q], base + at, 4);
        std::memcpy(&left, base + at + 4, 4);
        at += 8;
        continue;
      }
      const std::uint32_t tag = s_->run_tag_[q];
      const std::size_t bytes = record_bytes_(tag);
      for (; left > 0; --left) {
        const std::byte* p = base + at;
        std::uint32_t prefix[2];
        std::memcpy(prefix, p, sizeof prefix);
        // (The delivery lane inline: next_lane is a call.)
        int lane_no = -1;
        if (delivered) {
          lane_no = delivery_lane(rt_, prefix[0]);
          if (MAILROOM_UNLIKELY(lane_no < 0)) bad_forward(t.source, prefix[0]);
        } else {
          lane_no = next_lane(q, t.source, prefix[0], prefix[1]);
        }
        if (!put_record(lane_no, tag, prefix[0], p + 8, bytes, true, prefix[1])) {
          s_->forward_at_[q] = at;
          s_->run_left_[q] = left;
          return any;
        }
        at += static_cast<std::uint32_t>(8 + bytes);
        any = true;
      }
    }
    s_->run_left_[q] = 0;
    forwarded_front(q);
    any = true;
  }
  return any;
}

void conveyor_core::pop_front() noexcept {
  const arrival a = s_->arrivals_.front();
  s_->arrivals_.pop_front();
  s_->processed_items_ += a.header().items;
  ex_.items_handled += a.header().items;
  ex_.handled(a.source, a.buf, id_);
}

std::int64_t conveyor_core::filling_items(std::vector<int>* to, std::size_t most) const {
  std::int64_t items = 0;
  for (std::size_t d = 0; d < dests(); ++d) {
    const std::uint32_t n = buffer_of(d) == nullptr ? 0 : items_of(d);
    if (n == 0) continue;
    items += n;
    if (to != nullptr && to->size() < most) to->push_back(rt_.peer[d]);
  }
  return items;
}

std::int64_t conveyor_core::unacknowledged(std::vector<int>* to, std::size_t most) const {
  std::int64_t n = 0;
  for (std::size_t d = 0; d < s_->outstanding_.size(); ++d) {
    if (s_->outstanding_[d] == 0) continue;
    n += s_->outstanding_[d];
    if (to != nullptr && to->size() < most) to->push_back(rt_.peer[d]);
  }
  return n;
}

void conveyor_core::close() noexcept {
  if (s_->state_ == stream::open) s_->state_ = stream::flushing;
}

// Conveyors' end of stream, per link: once this PE has closed, it ships every partly filled
// buffer and then tells each PE its lanes lead to how many items it shipped there in all. A PE
// has ended once every link to it has, and it has received and processed what they announced.
// End messages need no collective and no communicator of their own, and may overtake the
// link's last buffers (MPI matches a source's messages in order, but its posted receives
// complete in any order): the count tells the receiver what is still to come.
// With node routing the links form three stages, ended in order: final and transit lanes (this
// PE's own items, so at once), network lanes (once every transit link to this PE has ended and
// all it brought is forwarded), delivery lanes (once the network links have too). Mesh routing
// has two more between network and delivery: transit2 (once the network links have ended here)
// and network2 (once the transit2 links have). Each stage waits only for the ones before, on
// every PE, so the ends cannot wait for each other in a cycle; classes a routing does not use
// have no lanes and no links, and end at once.
bool conveyor_core::step_stream() {
  switch (s_->state_) {
    case stream::open:
      return false;
    case stream::flushing:
      if ((s_->lanes_ended_ & 1u << k_final) == 0) end_lanes(k_final);
      // What the hop cache holds goes on before the stages it leads to may end.
      if (s_->hop_held_ > 0 && !flush_hops()) return false;
      // Each forwarded class once every earlier one is clear (transit(0) at once: its items
      // are this PE's own).
      for (std::uint32_t c = k_transit; c < cold::queue_class(s_->forward_.size()); ++c) {
        if ((s_->lanes_ended_ >> c & 1u) != 0) continue;
        for (std::uint32_t e = k_transit; e < c; ++e)
          if (!stage_clear(e)) return false;
        end_lanes(c);
      }
      for (std::uint32_t c = k_transit; c < cold::queue_class(s_->forward_.size()); ++c)
        if (!stage_clear(c)) return false;
      end_lanes(k_delivery);
      s_->state_ = stream::draining;
      [[fallthrough]];
    case stream::draining:
      // Ended also needs every buffer this PE shipped handed to the transport: one still in the
      // backlog (waiting for a credit) is counted in the ends sent, and the selector may be
      // destroyed once it has finished here (gather_async, a future of finished()).
      if (s_->links_open_[k_final] > 0 || s_->links_open_[k_delivery] > 0 ||
          s_->received_items_ < announced_items() || !s_->arrivals_.empty() ||
          !s_->backlog_.empty())
        return false;
      MAILROOM_CHECK(s_->received_items_ == announced_items(),
                     "mailbox #{} received {} items but {} were sent to this PE", id_,
                     s_->received_items_, announced_items());
      s_->state_ = stream::ended;
      [[fallthrough]];
    case stream::ended:
      return true;
  }
  return false;
}

void conveyor_core::end_lanes(std::uint32_t cls) {
  s_->lanes_ended_ |= std::uint64_t{1} << cls;
  for (int l = 0; l < rt_.lanes(); ++l) {
    const auto li = static_cast<std::size_t>(l);
    if (rt_.cls[li] != cls) continue;
    if (has_items(li)) ship(l);
    if (rt_.peer[li] == me_)
      end_of_stream(me_, cls, s_->sent_to_[li]);
    else
      ex_.send_end(rt_.peer[li], id_, signature_, link_flags(cls), s_->sent_to_[li]);
  }
}

bool conveyor_core::stage_clear(std::uint32_t cls) const noexcept {
  return s_->links_open_[cls] == 0 && s_->received_[cls] == s_->expected_[cls] && !forwarding() &&
         s_->hop_held_ == 0;
}

void conveyor_core::reduce_at_hops(const hop_rule& rule, std::size_t slots) {
  // Typed items only, and only where items pass through other PEs.
  if (!routed_ || !lanes_.empty() || item_bytes_ == 0) return;
  s_->hop_ = rule;
  s_->hop_slots_ = std::bit_floor(std::max<std::size_t>(slots, 1));
  s_->hop_stride_ = sizeof(hop_entry) + ((item_bytes_ + 7) & ~std::size_t{7});
}

std::int64_t conveyor_core::hop_combined_items() const noexcept { return s_->hop_combined_all_; }
std::int64_t conveyor_core::hop_combined_items(std::uint32_t cls) const noexcept {
  return cls < k_link_classes ? s_->hop_combined_[cls] : 0;
}
std::int64_t conveyor_core::hop_received_items(std::uint32_t cls) const noexcept {
  return forwarded_class(cls) ? s_->received_[cls] : 0;
}

// Appends the item held at `at` (a hop_entry and the item) to its lane, as forwarded.
bool conveyor_core::put_held(const std::byte* at) noexcept {
  hop_entry e{};
  std::memcpy(&e, at, sizeof e);
  const std::byte* item = at + sizeof e;
  const auto write = [&](std::byte* out) { std::memcpy(out, item, item_bytes_); };
  return e.words == 1 ? put_item<1>(e.lane, e.prefix, item_bytes_, true, write)
                      : put_item<2>(e.lane, e.prefix, item_bytes_, true, write);
}

bool conveyor_core::hop_fold(int lane_no, std::size_t words, const std::uint32_t* prefix,
                             const std::byte* item, std::uint32_t dest,
                             std::uint32_t cls) noexcept {
  cold& s = *s_;
  if (s.hops_.empty()) s.hops_.resize(s.forward_.size());
  cold::hop_cache& hc = s.hops_[cold::queue_of(cls)];
  auto* base = reinterpret_cast<std::byte*>(hc.slots.data());
  if (hc.slots.empty()) {
    hc.slots.assign(s.hop_slots_ * s.hop_stride_ / 8, 0);
    base = reinterpret_cast<std::byte*>(hc.slots.data());
    for (std::size_t k = 0; k < s.hop_slots_; ++k) {
      const std::int32_t empty = -1;
      std::memcpy(base + k * s.hop_stride_ + offsetof(hop_entry, dest), &empty, 4);
    }
  }
  const std::uint64_t key = s.hop_.key(s.hop_.self, item);
  const std::uint64_t h = (key ^ (std::uint64_t{dest} << 40)) * 0x9e3779b97f4a7c15ULL;
  std::byte* at = base + (static_cast<std::size_t>(h >> 32) & (s.hop_slots_ - 1)) * s.hop_stride_;
  hop_entry e{};
  std::memcpy(&e, at, sizeof e);
  if (e.dest == static_cast<std::int32_t>(dest) && e.key == key) {
    // Folded: its effect is in the held item, so it counts as processed here (the waves of
    // cycles and mr::quiesce compare the items sent with those processed).
    s.hop_.combine(s.hop_.self, at + sizeof e, item);
    ++s.hop_combined_[cls];
    ++s.hop_combined_all_;
    ++s.processed_items_;
    ++ex_.items_handled;
    return true;
  }
  if (e.dest >= 0) {
    if (!put_held(at)) return false;  // (the lane has no room: the item waits in its buffer)
  } else {
    ++hc.held;
    ++s.hop_held_;
  }
  e = hop_entry{key,
                static_cast<std::int32_t>(dest),
                lane_no,
                {prefix[0], words > 1 ? prefix[1] : 0U},
                static_cast<std::uint32_t>(words),
                0};
  std::memcpy(at, &e, sizeof e);
  std::memcpy(at + sizeof e, item, item_bytes_);
  return true;
}

bool conveyor_core::flush_hops() noexcept {
  cold& s = *s_;
  for (cold::hop_cache& hc : s.hops_) {
    auto* base = reinterpret_cast<std::byte*>(hc.slots.data());
    for (; hc.held > 0 && hc.flush_at < s.hop_slots_; ++hc.flush_at) {
      std::byte* at = base + hc.flush_at * s.hop_stride_;
      std::int32_t dest = 0;
      std::memcpy(&dest, at + offsetof(hop_entry, dest), 4);
      if (dest < 0) continue;
      if (!put_held(at)) return false;
      dest = -1;
      std::memcpy(at + offsetof(hop_entry, dest), &dest, 4);
      --hc.held;
      --s.hop_held_;
    }
    hc.flush_at = 0;
  }
  return s.hop_held_ == 0;
}

void conveyor_core::end_of_stream(int source, std::uint32_t cls, std::int64_t items) noexcept {
  MAILROOM_CHECK(cls < k_link_classes,
                 "mailbox #{}: an end of stream of link class {} from "
                 "PE {}",
                 id_, cls, source);
  const int k = rt_.in_link(cls, source);
  MAILROOM_CHECK(
      k >= 0 && s_->ended_[cls][static_cast<std::size_t>(k)] == 0 && s_->links_open_[cls] > 0,
      "mailbox #{}: PE {} ended its stream (link class {}) here twice or unexpected", id_, source,
      cls);
  s_->ended_[cls][static_cast<std::size_t>(k)] = 1;
  --s_->links_open_[cls];
  s_->expected_[cls] += items;
}

int conveyor_core::open_links(std::uint32_t classes, std::vector<int>* from,
                              std::size_t most) const {
  int open = 0;
  for (std::uint32_t c = 0; c < k_link_classes; ++c) {
    if ((classes >> c & 1u) == 0) continue;
    open += s_->links_open_[c];
    if (from == nullptr) continue;
    for (std::size_t k = 0; k < rt_.in_peers[c].size(); ++k)
      if (s_->ended_[c][k] == 0 && from->size() < most) from->push_back(rt_.in_peers[c][k]);
  }
  return open;
}

}  // namespace mailroom::detail
