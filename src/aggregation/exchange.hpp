// SPDX-License-Identifier: MIT
// The per-process hub of the aggregation layer: owns the transport channel and the buffer pool,
// sends full buffers (queueing them when every send slot is busy) and routes arriving buffers to
// the conveyor they belong to. Not API: conveyors and the runtime use it.
#pragma once

#include "aggregation/memory_plan.hpp"
#include "aggregation/routes.hpp"
#include "mailroom/config.hpp"
#include "mailroom/detail/buffer.hpp"
#include "mailroom/statistics.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace mailroom::transport {
class channel;  // (src/transport/transport.hpp)
class node_memory;
}  // namespace mailroom::transport

namespace mailroom::detail {

class conveyor_core;

/// What a conveyor reserved (exchange::reserve): whether its lanes to the PEs of this node fill
/// shared slots (then with node_credits each, from the pool; else from the heap like the
/// others), and the credits of its lanes from the heap (the buffers each may have
/// unacknowledged).
struct reservation {
  bool in_slots = false;
  std::uint32_t node_credits = 0;
  std::uint32_t credits = 0;
  std::size_t bytes = 0;  // of the budget
};

class exchange final {
 public:
  /// Creates the process's exchange, as current_config() says (collective; called by the
  /// runtime after transport::init).
  static void start();
  static void stop();
  [[nodiscard]] static bool running() noexcept { return instance_ != nullptr; }
  [[nodiscard]] static exchange& get() noexcept { return *instance_; }

  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
  /// Capacity of a lane to a PE of this node when its mailbox fills shared slots
  /// (MAILROOM_NODE_BUFFER_BYTES; memory_plan.hpp: node_buffer_bytes), at most capacity();
  /// capacity() when there is no pool.
  [[nodiscard]] std::size_t node_capacity() const noexcept { return node_capacity_; }
  /// The setting that bounds a message's size (the smaller buffer), for error messages.
  [[nodiscard]] const char* size_setting() const noexcept {
    return node_capacity_ < capacity_ ? "MAILROOM_NODE_BUFFER_BYTES" : "MAILROOM_BUFFER_BYTES";
  }
  /// Whether PE p shares this PE's node memory (this PE included).
  [[nodiscard]] bool on_node(int p) const noexcept { return node_index(p) >= 0; }
  [[nodiscard]] int me() const noexcept { return me_; }
  [[nodiscard]] int pes() const noexcept { return pes_; }
  /// What a conveyor reserved (detail/buffer.hpp).
  /// Takes a new conveyor's worst case: slots from the pool if they are left (every PE of a node
  /// decides alike), and its share of the budget with MAILROOM_CREDITS, or fewer when the budget
  /// left cannot hold them (memory_plan.hpp). credits is 0, reserving nothing, when not
  /// even c = 1 fits.
  reservation reserve() noexcept;
  /// A conveyor over a team's routes (routes::members), of shape `s` (every lane counted as one
  /// within the node outside the pool): its lanes all take heap buffers with MAILROOM_CREDITS
  /// credits each, so that every member agrees on them whatever else it has reserved (credits
  /// is 0 if they do not fit).
  reservation reserve_team(const mailbox_shape& s) noexcept;
  /// Gives back what reserve took.
  void release(const reservation& taken) noexcept;
  /// How a mailbox's lanes and links split between this node and others (every conveyor has the
  /// job's routes: one shape per PE, computed at start).
  [[nodiscard]] const mailbox_shape& shape() const noexcept { return shape_; }
  /// The part of the budget that no conveyor and no posted receive has reserved.
  [[nodiscard]] std::size_t budget_left() const noexcept { return budget_ - reserved_; }

  /// Collective: gives the conveyor the next id and the buffers that arrived for it early
  /// (checking that they were meant for a mailbox of its signature).
  std::uint32_t attach(conveyor_core* c);
  /// A conveyor over a team: `id` (k_team_conveyor | ..., agreed by its members) instead of the
  /// next one; otherwise as attach.
  void attach_team(conveyor_core* c, std::uint32_t id);
  void detach(std::uint32_t id) noexcept;
  /// Ids at or above it name conveyors over teams (team_conveyor_id); below, the job's
  /// conveyors in creation order.
  static constexpr std::uint32_t k_team_conveyor = 1u << 26;

  /// A buffer of this PE's own (the pool).
  std::byte* acquire() noexcept;
  /// A free slot of this PE's shared pool, to fill for `dest`, a PE of the node (send() then
  /// hands it over without a copy), or nullptr if none is free.
  std::byte* acquire_slot(int dest) noexcept;
  /// Gives back a buffer of this PE (from acquire or acquire_slot).
  void release(std::byte* buf) noexcept;
  /// Gives back a buffer that arrived from `source` without handling it (a shared slot goes back
  /// to its sender).
  void release_arrival(int source, std::byte* buf) noexcept;
  /// A buffer of conveyor `id` from `source` has been handled (or forwarded): gives it back and
  /// acknowledges it (a shared slot's return is its acknowledgement; others send one through
  /// MPI, naming the conveyor and the class of the link it came over).
  void handled(int source, std::byte* buf, std::uint32_t id);

  /// Sends a full buffer to `dest` (a remote PE); the conveyor holds a credit for it.
  void send(int dest, std::byte* buf);
  /// Ends conveyor `id`'s stream on the link to `dest`: `items` is everything it shipped there.
  /// Needs no credit (the receiver takes it in at once, nothing waits to be handled) and may pass
  /// the link's data buffers on the way: the receiver waits for the count.
  void send_end(int dest, std::uint32_t id, std::uint32_t signature, std::uint32_t flags,
                std::int64_t items);
  /// The job's routing (MAILROOM_ROUTING, MAILROOM_NODE_SIZE), for every conveyor.
  [[nodiscard]] const routes& job_routes() const noexcept { return routes_; }
  /// Which routing `auto` gave (never automatic).
  [[nodiscard]] routing routing_used() const noexcept { return routing_; }
  /// The node of PE p as routing sees it (MAILROOM_NODE_SIZE, or the nodes MPI reports).
  [[nodiscard]] int node_of(int p) const noexcept { return routes_.layout.node(p); }
  /// A conveyor has items to forward: progress() calls its forward() until it has none.
  void forward_later(conveyor_core* c) { forwarding_.push_back(c); }
  /// Acknowledges one handled buffer of conveyor `id` from `source`, at once: a sender waiting
  /// for the credit must not wait for this PE's next progress call (docs/design.md, credits).
  void acknowledge(int source, std::uint32_t id);
  /// The link pool: credits for lane l (of every conveyor: they share the job's routes) to
  /// another node, which any conveyor may take beyond its own (docs/design.md, flow control).
  [[nodiscard]] bool shared_free(std::size_t l) const noexcept { return shared_free_[l] > 0; }
  bool take_shared(std::size_t l) noexcept {
    if (shared_free_[l] == 0) return false;
    --shared_free_[l];
    return true;
  }
  void give_shared(std::size_t l, std::uint32_t n = 1) noexcept {
    shared_free_[l] += n;
    pool_returned_ = true;
  }
  /// A conveyor destroyed with `n` buffers on lane l's pool credits unacknowledged: their
  /// acknowledgements give them back.
  void owe_shared(std::size_t l, std::uint32_t n) noexcept { owed_[l] += n; }
  /// Credits of the link pool per lane to (and link in from) another node.
  [[nodiscard]] std::uint32_t link_credits() const noexcept { return link_credits_; }
  /// The shared pool's slots beyond the mailboxes' reservations (one per slot lane): a slot
  /// lane that holds its own slot (filling or handed over) takes one of these to fill another
  /// (docs/design.md, flow control). They count, not name, slots: any free slot will do.
  bool take_slot_extra() noexcept {
    if (std::size_t{slots_reserved_} + slot_extras_taken_ >= slots_) return false;
    ++slot_extras_taken_;
    return true;
  }
  void give_slot_extra(std::uint32_t n = 1) noexcept {
    slot_extras_taken_ -= n;
    pool_returned_ = true;
  }
  /// Slots beyond the reservations that no lane holds now (0 when the reservations fill the
  /// pool, or more than fill it once a new mailbox reserved while extras were out).
  [[nodiscard]] std::uint32_t slot_extras_free() const noexcept {
    const std::size_t used = std::size_t{slots_reserved_} + slot_extras_taken_;
    return used < slots_ ? static_cast<std::uint32_t>(slots_ - used) : 0;
  }
  /// Conveyors report buffers entering (+1) and leaving (-1) their credit backlogs.
  void backlog_changed(int delta) noexcept { backlogged_ += delta; }
  /// True when no buffer of this PE waits for a credit.
  [[nodiscard]] bool drained() const noexcept { return backlogged_ == 0; }

  /// Tests sends and receives, delivers arrivals and credits, sends acknowledgements.
  /// Returns true if anything happened.
  bool progress();

  /// Called by every progress loop with whether this poll found nothing to do. After
  /// k_idle_polls idle polls in a row, sleeps MAILROOM_IDLE_SLEEP_NS (if set): spinning is
  /// fastest while a PE has a core of its own; a short sleep lets a PE that shares one (or the
  /// kernel's network processing) run instead.
  void idle_poll(bool idle) noexcept {
    if (!idle) {
      idle_polls_ = 0;
    } else if (idle_sleep_ns_ > 0 && ++idle_polls_ >= k_idle_polls) {
      idle_polls_ = 0;
      sleep_idle();
    }
  }
  static constexpr int k_idle_polls = 64;

  [[nodiscard]] std::size_t pool_bytes() const noexcept { return pool_bytes_; }
  [[nodiscard]] std::size_t peak_pool_bytes() const noexcept { return peak_pool_bytes_; }
  [[nodiscard]] std::size_t live_conveyors() const noexcept { return live_; }
  /// Buffers this PE sent to other PEs: handed over in shared memory, and through MPI.
  [[nodiscard]] std::uint64_t handed_over() const noexcept { return handed_over_; }
  [[nodiscard]] std::uint64_t sent_through_mpi() const noexcept { return sent_through_mpi_; }
  /// End-of-stream messages this PE sent (one per conveyor and link).
  [[nodiscard]] std::uint64_t ends_sent() const noexcept { return ends_sent_; }

  /// Items of every conveyor, ever: shipped by this PE (to any PE, itself included) and handled
  /// here. Summed over the PEs, equal when no item is in flight anywhere (mr::quiesce).
  std::int64_t items_shipped = 0, items_handled = 0;
  /// Items shipped by the scheduler's idle flush.
  std::int64_t items_idle_flushed = 0;
  /// Buffers this PE's conveyors have sent and whose acknowledgement has not come back.
  std::int64_t unacknowledged = 0;
  /// The counters of every conveyor this PE has had: those ended, plus the live ones.
  [[nodiscard]] statistics totals() const;
  /// A conveyor's counters, added to the ended ones when it is destroyed.
  void add_ended(const conveyor_core& c);
  /// One line per conveyor id that buffers arrived for but that this PE has not constructed
  /// (empty if none): for the watchdog.
  [[nodiscard]] std::string describe_early() const;
  /// What mailbox `signature` is on PE `pe` (describe_signature there): from this PE's registry
  /// if it has constructed the same, else asked of `pe` (a control message its progress engine
  /// answers), waiting at most a few seconds while it takes in nothing else. For an error
  /// message, on the way to stopping the job.
  [[nodiscard]] std::string describe_on(int pe, std::uint32_t signature);
  /// Stops the job if buffers came for a mailbox this PE never constructed while it ends the
  /// runtime: the PEs constructed different numbers of selectors (called by ~runtime).
  void check_unclaimed();
  /// Ids of the control messages (above every conveyor's, the teams' included): a request
  /// for the description of a signature, and its reply (the text after the header).
  static constexpr std::uint32_t k_describe_request = 0xffffff00u;
  static constexpr std::uint32_t k_describe_reply = 0xffffff01u;
  /// Slots in this PE's shared pool (0: none).
  [[nodiscard]] std::uint32_t shared_slots() const noexcept { return slots_; }
  /// Conveyors so far whose node lanes were in the pool's slots.
  [[nodiscard]] std::uint64_t conveyors_in_slots() const noexcept { return in_slots_; }

  ~exchange();

 private:
  explicit exchange(const config& cfg);
  // What the channel calls, through sink_ (a transport::channel_sink that forwards here).
  struct sink;
  void sent(void* cookie) noexcept;
  void received(int source, std::byte* data, std::size_t bytes) noexcept;
  void acknowledged(int source, const std::uint32_t* ids, std::size_t n) noexcept;
  void sleep_idle() const noexcept;
  /// Counts a conveyor just attached as live and hands it the buffers that came for it early.
  void take_early(std::uint32_t id, conveyor_core& c);
  /// Hands an arrival to its conveyor: data to its queue, an end of stream to its count.
  void deliver(conveyor_core& c, int source, std::byte* buf) noexcept;
  [[noreturn]] void mismatch(int source, const buffer_header& h, const conveyor_core& c);
  /// A control message (k_describe_request, k_describe_reply) arrived.
  void control(int source, std::byte* buf) noexcept;
  void start_shared(const config& cfg);
  bool poll_shared() noexcept;

  // Buffers shared with the other PEs of this node. Each PE's part of the node memory holds a
  // hand-over ring per PE of the node (by index among them), then its pool of slots_ slots,
  // which it fills for any of them (docs/design.md, shared memory).
  struct ring;
  struct outgoing {  // the ring to one PE of the node
    ring* r = nullptr;
    std::uint32_t published = 0;  // slots handed over so far
    std::uint32_t reclaimed = 0;  // slots taken back so far
  };
  struct incoming {  // another PE's ring and slots for this PE
    ring* r = nullptr;
    std::byte* slots = nullptr;
    int source = 0;
    std::uint32_t taken = 0;  // slots received so far
  };
  [[nodiscard]] std::byte* pair_base(std::byte* part, int index) const noexcept {
    return part + static_cast<std::size_t>(index) * ring_bytes_;
  }
  void reclaim(outgoing& o, int dest) noexcept;
  [[nodiscard]] std::uint32_t slot_of(const std::byte* buf) const noexcept {
    return static_cast<std::uint32_t>(static_cast<std::size_t>(buf - my_slots_) / node_capacity_);
  }
  // Slots returned, whose conveyors are yet to be credited (by progress: not from inside a
  // conveyor's own call): conveyor id with the link class in its top bits (as in an
  // acknowledgement), and destination.
  std::vector<std::pair<std::uint32_t, int>> credits_due_, due_;
  void credit(std::uint32_t tagged_id, int peer) noexcept;
  routes routes_;
  routing routing_ = routing::direct;
  std::vector<conveyor_core*> forwarding_, forwarding_now_;
  void start_routes(const config& cfg);
  [[nodiscard]] std::uint32_t* back_of(void* r) const noexcept;
  std::unique_ptr<transport::node_memory> node_;
  std::uint32_t slots_ = 0;      // in this PE's pool; 0: none
  std::uint32_t ring_size_ = 0;  // entries of a ring (a power of two)
  std::uint32_t mask_ = 0;       // ring_size_ - 1
  std::size_t back_offset_ = 0;  // of a ring's back half from its sent half
  std::uint64_t handed_over_ = 0, sent_through_mpi_ = 0, ends_sent_ = 0;
  std::size_t ring_bytes_ = 0;
  std::size_t node_capacity_ = 0;
  std::uint32_t node_credits_ = 0;
  mailbox_shape shape_;
  std::uint32_t slot_need_ = 0;  // slots a conveyor takes from the pool (the most of any PE)
  std::uint32_t slots_reserved_ = 0;
  std::uint32_t slot_extras_taken_ = 0;  // by slot lanes beyond their own slot
  std::uint64_t in_slots_ = 0;
  std::byte* my_slots_ = nullptr;
  std::vector<std::uint32_t> free_slots_;  // slots used before that this PE may fill again
  std::uint32_t fresh_slots_ = 0;          // slots fresh_slots_..slots_-1 were never used
  [[nodiscard]] bool own_slot(const std::byte* buf) const noexcept {
    return buf >= my_slots_ && buf < my_slots_ + std::size_t{slots_} * node_capacity_;
  }
  std::uint32_t link_credits_ = 0;
  std::vector<std::uint32_t> shared_free_, owed_;  // per lane: the link pool (see take_shared)
  bool pool_returned_ = false;   // a pool credit came back (progress retries the backlogs)
  std::vector<int> node_pes_;    // world ranks of this node's PEs, ascending (their index)
  bool node_contiguous_ = true;  // node_pes_ is a range of ranks
  // PE p's index among this node's PEs, or -1 on another node: no table per PE.
  [[nodiscard]] int node_index(int p) const noexcept {
    if (node_contiguous_) {
      const auto i = static_cast<std::size_t>(static_cast<unsigned>(p - node_pes_.front()));
      return i < node_pes_.size() ? static_cast<int>(i) : -1;
    }
    const auto it = std::lower_bound(node_pes_.begin(), node_pes_.end(), p);
    return it != node_pes_.end() && *it == p ? static_cast<int>(it - node_pes_.begin()) : -1;
  }
  std::vector<outgoing> out_;  // by index among this node's PEs
  std::vector<incoming> in_;   // the other PEs of this node

  static exchange* instance_;
  static const bool instance_is_per_pe_;  // (registered with the simulated machine)
  std::size_t capacity_;
  std::size_t budget_;
  std::uint32_t credits_;
  std::size_t reserved_;  // posted receives and the live conveyors' reservations
  std::uint64_t idle_sleep_ns_;
  int idle_polls_ = 0;
  int me_, pes_;
  std::vector<std::byte*> free_;
  std::size_t pool_bytes_ = 0, peak_pool_bytes_ = 0;
  long backlogged_ = 0;
  // The job's live conveyors by id (a map, not a vector indexed by id: a program that creates
  // and destroys mailboxes for ever while one lives on keeps it small; one lookup per buffer;
  // ordered, so that the oldest takes returned credits first, as it did).
  std::map<std::uint32_t, conveyor_core*> conveyors_;
  /// The job's conveyor `id` if it is attached here (null: destroyed, or not constructed yet).
  [[nodiscard]] conveyor_core* job_conveyor(std::uint32_t id) const noexcept {
    const auto it = conveyors_.find(id);
    return it == conveyors_.end() ? nullptr : it->second;
  }
  std::unordered_map<std::uint32_t, conveyor_core*> team_conveyors_;  // by id
  [[nodiscard]] conveyor_core* team_conveyor(std::uint32_t id) const noexcept {
    const auto it = team_conveyors_.find(id);
    return it == team_conveyors_.end() ? nullptr : it->second;
  }
  statistics ended_;  // of the conveyors destroyed so far
  std::unordered_map<std::uint32_t, std::vector<std::pair<int, std::byte*>>> early_;
  std::uint32_t next_id_ = 0;
  std::size_t live_ = 0;
  // describe_on: the reply awaited (its signature and source), and its text once it came.
  // Meanwhile (the job is stopping) other arrivals are set aside unhandled.
  int asked_ = -1;
  std::uint32_t asked_signature_ = 0;
  std::string described_;
  bool described_done_ = false;
  std::unique_ptr<sink> sink_;  // (before the channel: it outlives it)
  std::unique_ptr<transport::channel> channel_;
};

}  // namespace mailroom::detail
