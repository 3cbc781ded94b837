// SPDX-License-Identifier: MIT
// Per-process hub of the aggregation layer: buffer pool, sends, acknowledgements, and routing of
// arrivals and credits to their conveyors.
#include "aggregation/exchange.hpp"

#include "aggregation/memory_plan.hpp"
#include "mailroom/detail/conveyor_core.hpp"
#include "mailroom/detail/signature.hpp"
#include "mailroom/error.hpp"

#include "common/pe_local.hpp"
#include "common/trace.hpp"
#include "transport/transport.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <new>

namespace mailroom::detail {

exchange* exchange::instance_ = nullptr;
bool g_may_spill = false;
const bool exchange::instance_is_per_pe_ = pe_locals::add(exchange::instance_);
MAILROOM_PE_LOCAL(g_may_spill);

namespace {
constexpr std::align_val_t k_align{64};
constexpr std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }
std::uint32_t load_acquire(std::uint32_t& x) noexcept {
  return std::atomic_ref<std::uint32_t>(x).load(std::memory_order_acquire);
}
void store_release(std::uint32_t& x, std::uint32_t v) noexcept {
  std::atomic_ref<std::uint32_t>(x).store(v, std::memory_order_release);
}
}  // namespace

// The hand-over ring of a pair (sender, receiver) of PEs on one node, in the sender's part at the
// receiver's index; `sent` and `back` have ring_size_ entries each, on cache lines of their own.
// The sender writes a slot's index into sent[published mod ring_size_], then publishes the count
// (release); the receiver reads the count (acquire) and the slot. Once handled, the receiver
// writes the index into back[returned mod ring_size_] and publishes that count; the sender takes
// the slot back. The sender hands over a slot only while fewer than ring_size_ are out with that
// receiver (else it sends the slot through MPI), so neither half can overrun; ring_size_ is a
// power of two, so the positions stay in step when a 32-bit count wraps.
struct exchange::ring {
  alignas(64) std::uint32_t published;  // written by the sender
  alignas(64) std::uint32_t returned;   // written by the receiver
  // Then sent[slots_] and, at the next cache line, back[slots_] (see sent_of, back_of).
};

namespace {
std::uint32_t* sent_of(void* r) noexcept {
  return reinterpret_cast<std::uint32_t*>(static_cast<std::byte*>(r) + 128);
}
}  // namespace

std::uint32_t* exchange::back_of(void* r) const noexcept {
  return reinterpret_cast<std::uint32_t*>(static_cast<std::byte*>(r) + 128 + back_offset_);
}

void exchange::start() {
  MAILROOM_ASSERT(instance_ == nullptr);
  const config& cfg = current_config();
  // Every PE must agree on the buffer size: receives are posted with it.
  const auto lo = transport::allreduce_min(static_cast<std::int64_t>(cfg.buffer_bytes));
  const auto hi = transport::allreduce_max(static_cast<std::int64_t>(cfg.buffer_bytes));
  MAILROOM_CHECK(lo == hi,
                 "MAILROOM_BUFFER_BYTES differs between PEs ({} vs {}); set it the same "
                 "on every PE",
                 lo, hi);
  instance_ = new exchange(cfg);
}

void exchange::stop() {
  delete instance_;
  instance_ = nullptr;
}

struct exchange::sink final : transport::channel_sink {
  explicit sink(exchange& e) noexcept : ex(e) {}
  void sent(void* cookie) noexcept override { ex.sent(cookie); }
  void received(int source, std::byte* data, std::size_t bytes) noexcept override {
    ex.received(source, data, bytes);
  }
  std::byte* fresh_buffer() noexcept override { return ex.acquire(); }
  void acknowledged(int source, const std::uint32_t* ids, std::size_t n) noexcept override {
    ex.acknowledged(source, ids, n);
  }
  exchange& ex;
};

exchange::exchange(const config& cfg)
    : capacity_((cfg.buffer_bytes + 63) / 64 * 64),
      budget_(cfg.budget_bytes),
      credits_(static_cast<std::uint32_t>(cfg.credits)),
      reserved_(cfg.receives_posted * capacity_),
      idle_sleep_ns_(cfg.idle_sleep_ns),
      me_(transport::rank()),
      pes_(transport::size()) {
  MAILROOM_CHECK(cfg.receives_posted * capacity_ <= budget_,
                 "MAILROOM_BUDGET_BYTES={} cannot hold the {} posted receives of {} bytes (raise "
                 "the budget or lower MAILROOM_BUFFER_BYTES)",
                 budget_, cfg.receives_posted, capacity_);
  sink_ = std::make_unique<sink>(*this);
  channel_ = std::make_unique<transport::channel>(capacity_, static_cast<int>(cfg.receives_posted),
                                                  *sink_);
  start_routes(cfg);
  start_shared(cfg);
}

namespace {
// An acknowledgement names the conveyor in its low 27 bits and the link class in the top five.
constexpr std::uint32_t k_id_bits = 27;
static_assert(exchange::k_team_conveyor * 2 <= 1u << k_id_bits &&
              k_link_classes <= 1 << (32 - k_id_bits));
constexpr std::uint32_t tag_id(std::uint32_t id, std::uint32_t cls) noexcept {
  return id | cls << k_id_bits;
}
}  // namespace

void exchange::start_routes(const config& cfg) {
  // Every PE must route alike: a PE forwards what its peers expect it to.
  const auto want = static_cast<std::int64_t>(cfg.routing * (1u << 21) + cfg.node_size);
  MAILROOM_CHECK(transport::allreduce_min(want) == transport::allreduce_max(want),
                 "MAILROOM_ROUTING or MAILROOM_NODE_SIZE differs between PEs; set them the same "
                 "on every PE");
  // Where the PEs are: blocks of MAILROOM_NODE_SIZE, else the nodes MPI reports, gathered once
  // and kept as a formula when the placement has one (aggregation/routes.hpp, node_layout).
  const node_layout layout = [&] {
    if (cfg.node_size > 0)
      return node_layout::blocked(pes_, static_cast<int>(std::min<std::uint64_t>(
                                            cfg.node_size, static_cast<std::uint64_t>(pes_))));
    std::vector<int> node_of(static_cast<std::size_t>(pes_)), local_of(node_of.size());
    transport::allgather(transport::layout().node, node_of.data());
    transport::allgather(transport::layout().node_rank, local_of.data());
    return node_layout::of(node_of, local_of);
  }();
  const int nodes = layout.nodes(), widest = layout.widest();
  const auto wanted = static_cast<routing>(cfg.routing);
  routing_ = resolve_routing(wanted, pes_, nodes, widest);
  for (;;) {
    routes_ = routes::of(routing_, me_, layout);
    // auto widens a routing whose lanes to other nodes the budget cannot hold for a few
    // mailboxes, on every PE alike.
    if (wanted != routing::automatic || routing_ == routing::mesh || pes_ <= 64 || nodes <= 1)
      break;
    const int mine = layout.node(me_);
    const mailbox_shape s = shape_of(routes_, [&](int p) { return layout.node(p) == mine; });
    const bool fits =
        auto_fits(s, capacity_, static_cast<std::uint32_t>(cfg.link_credits), budget_);
    if (transport::allreduce_min(fits ? 1 : 0) == 1) break;
    routing_ = next_routing(routing_, widest);
  }
}

void exchange::start_shared(const config& cfg) {
  static_assert(sizeof(ring) == 128);
  // Every PE must agree on what routes through shared memory: the same settings everywhere.
  const auto want = static_cast<std::int64_t>(cfg.shared_slots);
  const auto node_want = static_cast<std::int64_t>(cfg.node_buffer_bytes);
  MAILROOM_CHECK(transport::allreduce_min(want) == transport::allreduce_max(want) &&
                     transport::allreduce_min(node_want) == transport::allreduce_max(node_want),
                 "MAILROOM_SHARED_SLOTS or MAILROOM_NODE_BUFFER_BYTES differs between PEs; set "
                 "them the same on every PE");
  const int node_size = transport::layout().node_size;
  node_capacity_ = node_buffer_bytes(cfg.node_buffer_bytes, node_size, capacity_);
  node_credits_ = node_credits(node_size, credits_);
  // The pool: the same on every PE of a node (their parts are laid out alike), so sized from
  // the smallest budget; each slot stands for a buffer a conveyor would otherwise take from the
  // heap, and the pool is reserved from the budget as a whole.
  const std::uint64_t per_peer =
      static_cast<std::uint64_t>(transport::allreduce_min(static_cast<std::int64_t>(
          pool_per_peer(cfg.shared_slots, budget_, node_size, node_capacity_))));
  slots_ = pool_slots(per_peer, node_size);
  ring_size_ = ring_entries(slots_);
  mask_ = ring_size_ - 1;
  back_offset_ = round_up(4 * static_cast<std::size_t>(ring_size_), 64);
  ring_bytes_ = detail::ring_bytes(ring_size_);
  const std::size_t part = detail::pool_bytes(slots_, node_size, node_capacity_);
  // Collective (every PE, even with nothing to share).
  node_ = std::make_unique<transport::node_memory>(part);
  if (slots_ == 0) {  // no pool: every lane has buffers of the full size
    node_pes_.push_back(me_);
    node_capacity_ = capacity_;
  } else {
    reserved_ += part;
    node_pes_ = node_->members();
    node_contiguous_ =
        node_pes_.back() - node_pes_.front() + 1 == static_cast<int>(node_pes_.size());
    std::byte* mine = node_->part(me_);
    my_slots_ = mine + static_cast<std::size_t>(node_size) * ring_bytes_;
    free_slots_.reserve(slots_);
    out_.resize(node_pes_.size());
    const int my_index = node_index(me_);
    for (const int p : node_pes_) {
      if (p == me_) continue;
      const int index = node_index(p);
      out_[static_cast<std::size_t>(index)].r =
          ::new (static_cast<void*>(pair_base(mine, index))) ring{};
      std::byte* theirs = node_->part(p);
      in_.push_back(incoming{reinterpret_cast<ring*>(pair_base(theirs, my_index)),
                             theirs + static_cast<std::size_t>(node_size) * ring_bytes_, p, 0});
    }
  }
  // What a conveyor takes from the pool: the most any PE needs, so that every PE of a node
  // decides alike whether the next conveyor's node lanes are in slots. (Collective: every PE,
  // with a pool or without.)
  shape_ = shape_of(routes_, [&](int p) { return on_node(p); });
  const std::size_t need = slots_ > 0 ? mailbox_slots(shape_, node_credits_) : 0;
  slot_need_ =
      static_cast<std::uint32_t>(transport::allreduce_max(static_cast<std::int64_t>(need)));
  // A pool too small for any conveyor stays unused: its pages are never touched, and the budget
  // it was reserved from goes back to the heap.
  if (slots_ > 0 && slot_need_ > slots_) reserved_ -= part;
  // The link pool: credits per lane to another node that any conveyor may use beyond its own
  // one, reserved here once for all of them, on the receiving side as well (per link in). The
  // same on every PE: what a sender may have in flight is what its receiver reserved.
  link_credits_ = static_cast<std::uint32_t>(
      transport::allreduce_min(static_cast<std::int64_t>(link_credits_that_fit(
          shape_, capacity_, budget_left(), static_cast<std::uint32_t>(cfg.link_credits)))));
  reserved_ += link_pool_bytes(shape_, capacity_, link_credits_);
  shared_free_.assign(static_cast<std::size_t>(routes_.lanes()), 0);
  owed_.assign(shared_free_.size(), 0);
  for (std::size_t l = 0; l < shared_free_.size(); ++l)
    if (!on_node(routes_.peer[l])) shared_free_[l] = link_credits_;
  node_->node_barrier();  // every ring is in place before anyone hands over a slot
}

void exchange::reclaim(outgoing& o, int dest) noexcept {
  const std::uint32_t returned = load_acquire(o.r->returned);
  const std::uint32_t* back = back_of(o.r);
  for (; o.reclaimed != returned; ++o.reclaimed) {
    const std::uint32_t k = back[o.reclaimed & mask_];
    MAILROOM_CHECK(k < slots_, "corrupt shared-memory ring from PE {}: slot {} of {}", dest, k,
                   slots_);
    free_slots_.push_back(k);
    // The slot's header still names its conveyor and link: the return is that lane's credit.
    const auto* h =
        reinterpret_cast<const buffer_header*>(my_slots_ + std::size_t{k} * node_capacity_);
    credits_due_.emplace_back(tag_id(h->conveyor, link_class_of(h->flags)), dest);
  }
}

std::byte* exchange::acquire_slot(int dest) noexcept {
  if (free_slots_.empty()) {
    // Slots come back where they are handled: the ring of `dest` first (the pool's working set
    // stays as small as the traffic needs: slots used before are still in cache).
    if (dest != me_) {
      outgoing& o = out_[static_cast<std::size_t>(node_index(dest))];
      if (o.reclaimed != load_acquire(o.r->returned)) reclaim(o, dest);
    }
  }
  if (free_slots_.empty()) {
    if (fresh_slots_ < slots_) {  // one never used (its pages are touched now: the pool grows)
      pool_bytes_ += node_capacity_;
      peak_pool_bytes_ = std::max(peak_pool_bytes_, pool_bytes_);
      return my_slots_ + static_cast<std::size_t>(fresh_slots_++) * node_capacity_;
    }
    for (std::size_t i = 0; i < out_.size(); ++i)
      if (out_[i].r != nullptr) reclaim(out_[i], node_pes_[i]);
    if (free_slots_.empty()) return nullptr;
  }
  const std::uint32_t k = free_slots_.back();
  free_slots_.pop_back();
  return my_slots_ + static_cast<std::size_t>(k) * node_capacity_;
}

bool exchange::poll_shared() noexcept {
  bool any = false;
  for (std::size_t i = 0; i < out_.size(); ++i) {
    outgoing& o = out_[i];
    if (o.r != nullptr && o.reclaimed != load_acquire(o.r->returned)) reclaim(o, node_pes_[i]);
  }
  if (!credits_due_.empty()) {
    any = true;
    // (Taken out first: a credit may send, and nothing it calls may add to the list meanwhile.)
    due_.swap(credits_due_);
    for (const auto& [id, dest] : due_) credit(id, dest);
    due_.clear();
  }
  for (incoming& i : in_) {
    const std::uint32_t published = load_acquire(i.r->published);
    const std::uint32_t* sent = sent_of(i.r);
    for (; i.taken != published; ++i.taken) {
      const std::uint32_t k = sent[i.taken & mask_];
      MAILROOM_CHECK(k < slots_, "corrupt shared-memory ring from PE {}: slot {} of {}", i.source,
                     k, slots_);
      std::byte* buf = i.slots + static_cast<std::size_t>(k) * node_capacity_;
      const std::uint32_t bytes = reinterpret_cast<const buffer_header*>(buf)->bytes;
      MAILROOM_CHECK(bytes >= k_header_bytes && bytes <= node_capacity_,
                     "corrupt shared-memory buffer from PE {} ({} bytes)", i.source, bytes);
      received(i.source, buf, bytes);
      any = true;
    }
  }
  return any;
}

exchange::~exchange() {
  // Everything has terminated; let what is still in flight (acknowledgements) complete.
  while (channel_->sends_in_flight() > 0) channel_->poll();
  channel_.reset();
  for (auto& [id, list] : early_)
    for (auto& [src, buf] : list) release_arrival(src, buf);
  for (std::byte* b : free_) ::operator delete[](b, k_align);
  MAILROOM_CHECK(slot_extras_taken_ == 0,
                 "{} slots of the shared pool beyond the mailboxes' "
                 "reservations were never given back",
                 slot_extras_taken_);
  node_.reset();  // collective
}

void exchange::sleep_idle() const noexcept {
  const timespec pause{static_cast<time_t>(idle_sleep_ns_ / 1'000'000'000),
                       static_cast<long>(idle_sleep_ns_ % 1'000'000'000)};
  nanosleep(&pause, nullptr);
}

reservation exchange::reserve() noexcept {
  reservation taken;
  // Every PE of a node has the same pool and takes the same slot_need_ per conveyor, in the
  // same order: they agree on which conveyors' node lanes are in slots.
  taken.in_slots = slots_ > 0 && std::size_t{slots_reserved_} + slot_need_ <= slots_;
  taken.node_credits = taken.in_slots ? node_credits_ : 0;
  // Lanes within the node have C_node credits in slots or not: what keeps the node's memory
  // busy is the buffers in flight over all of them (and without slots each credit costs a full
  // buffer on both ends).
  taken.credits = credits_that_fit(shape_, capacity_, budget_left(), node_credits_, taken.in_slots);
  if (taken.credits == 0) return reservation{};
  taken.bytes = mailbox_reservation(shape_, capacity_, taken.credits, taken.in_slots);
  reserved_ += taken.bytes;
  if (taken.in_slots) {
    slots_reserved_ += slot_need_;
    ++in_slots_;
  }
  return taken;
}

reservation exchange::reserve_team(const mailbox_shape& s) noexcept {
  reservation taken;
  const std::size_t bytes = mailbox_reservation(s, capacity_, credits_, false);
  if (credits_ == 0 || bytes > budget_left()) return taken;
  taken.credits = credits_;
  taken.bytes = bytes;
  reserved_ += bytes;
  return taken;
}

void exchange::release(const reservation& taken) noexcept {
  if (taken.credits == 0) return;
  reserved_ -= taken.bytes;
  if (taken.in_slots) slots_reserved_ -= slot_need_;
}

std::uint32_t exchange::attach(conveyor_core* c) {
  const std::uint32_t id = next_id_++;
  MAILROOM_CHECK(id < k_team_conveyor, "more than {} mailboxes constructed", k_team_conveyor);
  conveyors_.emplace(id, c);
  take_early(id, *c);
  return id;
}

void exchange::attach_team(conveyor_core* c, std::uint32_t id) {
  MAILROOM_ASSERT(id >= k_team_conveyor);
  const bool fresh = team_conveyors_.emplace(id, c).second;
  MAILROOM_CHECK(fresh, "mailbox #{:#x} over a team constructed twice", id);
  take_early(id, *c);
}

void exchange::take_early(std::uint32_t id, conveyor_core& c) {
  ++live_;
  const auto it = early_.find(id);
  if (it == early_.end()) return;
  for (auto& [src, buf] : it->second) {
    const auto& h = *reinterpret_cast<const buffer_header*>(buf);
    if (MAILROOM_UNLIKELY(h.signature != c.signature())) mismatch(src, h, c);
    deliver(c, src, buf);
  }
  early_.erase(it);
}

// (MAILROOM_TRACE: each buffer as it arrives, before its items are handled.)
namespace {
void traced_arrival(int source, const std::byte* buf) noexcept {
  const auto& h = *reinterpret_cast<const buffer_header*>(buf);
  if ((h.flags & k_end_of_stream) != 0) {
    std::int64_t items = 0;
    std::memcpy(&items, buf + k_header_bytes, sizeof items);
    trace::record(trace::builtin().end_of_stream, trace::now(), -1, {source, h.conveyor, items, 0});
  } else {
    trace::record(trace::builtin().arrive, trace::now(), -1,
                  {source, h.conveyor, h.items, h.bytes});
  }
}
}  // namespace

void exchange::deliver(conveyor_core& c, int source, std::byte* buf) noexcept {
  const auto& h = *reinterpret_cast<const buffer_header*>(buf);
  const std::uint32_t cls = link_class_of(h.flags);
  if (MAILROOM_UNLIKELY(trace::g_on)) traced_arrival(source, buf);
  if ((h.flags & k_end_of_stream) != 0) {
    std::int64_t items = 0;
    std::memcpy(&items, buf + k_header_bytes, sizeof items);
    release(buf);
    c.end_of_stream(source, cls, items);
  } else if (cls == k_final || cls == k_delivery) {
    c.deliver(source, buf);
  } else {
    c.deliver_transit(source, buf, cls);
  }
}

namespace {
// Mailbox #k: the k-th mailbox or conveyor a PE constructed, counting from 0; a team's by its id.
std::string mailbox_number(std::uint32_t id) {
  return id >= exchange::k_team_conveyor ? fmt::format("#{:#x} (over a team)", id)
                                         : fmt::format("#{}", id);
}
}  // namespace

void exchange::mismatch(int source, const buffer_header& h, const conveyor_core& c) {
  const std::string theirs = describe_on(source, h.signature);
  MAILROOM_FAIL(
      "PEs constructed their selectors differently: PE {} sent a buffer to its mailbox "
      "{}, {}; but on PE {} mailbox {} is {}. Every PE must construct its selectors "
      "and conveyors in the same order, at the same lines, with the same mailbox types "
      "(and names); no handler ran on the crossed message",
      source, mailbox_number(h.conveyor), theirs, me_, mailbox_number(h.conveyor),
      describe_signature(c.signature()));
}

std::string exchange::describe_on(int pe, std::uint32_t signature) {
  if (known_signature(signature) || pe == me_ || asked_ >= 0) return describe_signature(signature);
  // A header alone asks; the reply's text follows its header. Both need no credit: the
  // receiver takes them in at once and answers from its progress engine.
  std::byte* buf = acquire();
  *reinterpret_cast<buffer_header*>(buf) =
      buffer_header{k_describe_request, k_header_bytes, 0, 0, signature, 0};
  asked_ = pe;
  asked_signature_ = signature;
  channel_->send(pe, buf, k_header_bytes, buf);
  constexpr double k_patience_seconds = 5;
  const double until = transport::wtime() + k_patience_seconds;
  while (!described_done_ && transport::wtime() < until) channel_->poll();
  if (!described_done_)
    return fmt::format("{} (PE {} did not say what it is within {} s: it takes in no messages)",
                       describe_signature(signature), pe, k_patience_seconds);
  return described_;
}

void exchange::control(int source, std::byte* buf) noexcept {
  const auto& h = *reinterpret_cast<const buffer_header*>(buf);
  if (h.conveyor == k_describe_request) {
    const std::string text = describe_signature(h.signature);
    const std::size_t n = std::min(text.size(), capacity_ - k_header_bytes);
    std::byte* reply = acquire();
    *reinterpret_cast<buffer_header*>(reply) = buffer_header{
        k_describe_reply, static_cast<std::uint32_t>(k_header_bytes + n), 0, 0, h.signature, 0};
    std::memcpy(reply + k_header_bytes, text.data(), n);
    channel_->send(source, reply, k_header_bytes + n, reply);
  } else if (h.conveyor == k_describe_reply && source == asked_ &&
             h.signature == asked_signature_) {
    described_.assign(reinterpret_cast<const char*>(buf + k_header_bytes),
                      h.bytes - k_header_bytes);
    described_done_ = true;
  }
  release_arrival(source, buf);
}

void exchange::check_unclaimed() {
  // (Buffers wait there only for mailboxes not constructed yet: at the end, never to be.)
  for (const auto& [id, list] : early_) {
    const auto& h = *reinterpret_cast<const buffer_header*>(list.front().second);
    const int source = list.front().first;
    MAILROOM_FAIL(
        "PEs constructed their selectors differently: PE {} sent {} buffers to its mailbox {}, "
        "{}; but this PE ends the runtime without constructing it ({} mailboxes and conveyors "
        "of the job constructed here). Every PE must construct the same selectors and "
        "conveyors, in the same order",
        source, list.size(), mailbox_number(id), describe_on(source, h.signature), next_id_);
  }
}

namespace {
void add_conveyor(statistics& s, const conveyor_core& c) {
  const auto pes = static_cast<std::size_t>(c.route_table().pes);
  if (s.messages_to.size() < pes) {
    s.messages_to.resize(pes, 0);
    s.bytes_to.resize(pes, 0);
    s.buffers_to.resize(pes, 0);
  }
  // Per lane, counted against the PE it leads to: the traffic on each link.
  for (std::size_t l = 0; l < c.items_to().size(); ++l) {
    const auto d = static_cast<std::size_t>(c.route_table().peer[l]);
    s.messages_to[d] += c.items_to()[l];
    s.bytes_to[d] += c.bytes_to()[l];
    s.buffers_to[d] += c.buffers_to()[l];
    s.messages_sent += c.items_to()[l];
    s.bytes_sent += c.bytes_to()[l];
    s.buffers_sent += c.buffers_to()[l];
  }
  s.room_sent += c.room_sent();
  s.messages_forwarded += c.forwarded_items();
  s.messages_combined += c.combined_items;
  s.messages_combined_at_hops += c.hop_combined_items();
  s.messages_handled += c.processed_items() - c.hop_combined_items();
  // Per hop: the forwarded classes in stage order.
  const auto hops = 2 * static_cast<std::size_t>(c.route_table().stages);
  if (s.hop_in.size() < hops) {
    s.hop_in.resize(hops, 0);
    s.hop_combined.resize(hops, 0);
  }
  for (std::size_t k = 0; k < hops; ++k) {
    s.hop_in[k] += c.hop_received_items(static_cast<std::uint32_t>(k) + k_transit);
    s.hop_combined[k] += c.hop_combined_items(static_cast<std::uint32_t>(k) + k_transit);
  }
  s.credit_wait_seconds += c.credit_wait_seconds();
}
}  // namespace

void exchange::add_ended(const conveyor_core& c) { add_conveyor(ended_, c); }

statistics exchange::totals() const {
  statistics s = ended_;
  s.idle_flushed = items_idle_flushed;
  for (const auto& [id, c] : conveyors_) add_conveyor(s, *c);
  for (const auto& [id, c] : team_conveyors_) add_conveyor(s, *c);
  return s;
}

std::string exchange::describe_early() const {
  std::string out;
  for (const auto& [id, list] : early_) {
    const auto& h = *reinterpret_cast<const buffer_header*>(list.front().second);
    out += fmt::format(
        "  {} buffers arrived (first from PE {}) for mailbox #{}, which this PE "
        "has not constructed: on the sender, {}\n",
        list.size(), list.front().first, id, describe_signature(h.signature));
  }
  return out;
}

void exchange::detach(std::uint32_t id) noexcept {
  if (id >= k_team_conveyor) {
    team_conveyors_.erase(id);
    --live_;
    return;
  }
  std::erase(forwarding_, job_conveyor(id));
  conveyors_.erase(id);
  --live_;
}

std::byte* exchange::acquire() noexcept {
  if (!free_.empty()) {
    std::byte* b = free_.back();
    free_.pop_back();
    return b;
  }
  pool_bytes_ += capacity_;
  if (pool_bytes_ > peak_pool_bytes_) peak_pool_bytes_ = pool_bytes_;
  return static_cast<std::byte*>(::operator new[](capacity_, k_align));
}

void exchange::release(std::byte* buf) noexcept {
  if (own_slot(buf)) {  // a slot not handed over (a conveyor's end, the own PE, or sent by MPI)
    free_slots_.push_back(slot_of(buf));
    return;
  }
  // Above budget (after a spill), give memory back instead of keeping it pooled.
  if (pool_bytes_ > budget_) {
    ::operator delete[](buf, k_align);
    pool_bytes_ -= capacity_;
    return;
  }
  free_.push_back(buf);
}

void exchange::release_arrival(int source, std::byte* buf) noexcept {
  const std::uint32_t slot = reinterpret_cast<const buffer_header*>(buf)->slot;
  if (slot == 0) {
    release(buf);
    return;
  }
  // Back to its sender: the ring of (source, this PE) in the source's part.
  ring* r = reinterpret_cast<ring*>(pair_base(node_->part(source), node_index(me_)));
  MAILROOM_ASSERT(slot - 1 < slots_);
  // (Written by this PE only: a relaxed load reads its own last store.)
  const std::uint32_t returned =
      std::atomic_ref<std::uint32_t>(r->returned).load(std::memory_order_relaxed);
  back_of(r)[returned & mask_] = slot - 1;
  store_release(r->returned, returned + 1);
}

void exchange::handled(int source, std::byte* buf, std::uint32_t id) {
  // A shared slot's return is its acknowledgement; other buffers from other PEs get one by MPI.
  const auto& h = *reinterpret_cast<const buffer_header*>(buf);
  const bool own_memory = h.slot == 0;
  const std::uint32_t tagged = tag_id(id, link_class_of(h.flags));
  release_arrival(source, buf);
  if (own_memory && source != me_) acknowledge(source, tagged);
}

void exchange::send(int dest, std::byte* buf) {
  MAILROOM_ASSERT(dest != me_);
  auto* h = reinterpret_cast<buffer_header*>(buf);
  if (own_slot(buf)) {  // hand the slot over: no copy, no MPI
    outgoing& o = out_[static_cast<std::size_t>(node_index(dest))];
    MAILROOM_ASSERT(o.r != nullptr);
    if (o.published - o.reclaimed >= ring_size_) reclaim(o, dest);
    if (o.published - o.reclaimed < ring_size_) {
      const std::uint32_t k = slot_of(buf);
      h->slot = k + 1;
      sent_of(o.r)[o.published & mask_] = k;
      store_release(o.r->published, ++o.published);
      ++handed_over_;
      return;
    }
    // (Its ring is full: the slot goes through MPI, and comes back to the pool once sent.)
  }
  h->slot = 0;
  ++sent_through_mpi_;
  channel_->send(dest, buf, h->bytes, buf);
}

void exchange::send_end(int dest, std::uint32_t id, std::uint32_t signature, std::uint32_t flags,
                        std::int64_t items) {
  MAILROOM_ASSERT(dest != me_);
  std::byte* buf = acquire();
  *reinterpret_cast<buffer_header*>(buf) =
      buffer_header{id, k_end_bytes, 0, 0, signature, flags | k_end_of_stream};
  std::memcpy(buf + k_header_bytes, &items, sizeof items);
  ++ends_sent_;
  channel_->send(dest, buf, k_end_bytes, buf);
}

void exchange::acknowledge(int source, std::uint32_t id) { channel_->send_acks(source, &id, 1); }

bool exchange::progress() {
  const bool shared = slots_ > 0 && poll_shared();
  bool any = (channel_->poll() > 0) || shared;
  if (pool_returned_ && backlogged_ > 0) {
    // Credits of the link pool came back while buffers wait: any conveyor may take them.
    pool_returned_ = false;
    for (const auto& [id, c] : conveyors_)
      if (c->backlogged()) c->retry_backlog();
  }
  if (!forwarding_.empty()) {
    // (Taken out first: forwarding may queue more, for the next call.)
    forwarding_now_.swap(forwarding_);
    for (conveyor_core* c : forwarding_now_) {
      any = c->forward() || any;
      if (c->forwarding()) forwarding_.push_back(c);
    }
    forwarding_now_.clear();
  }
  return any;
}

void exchange::sent(void* cookie) noexcept { release(static_cast<std::byte*>(cookie)); }

void exchange::received(int source, std::byte* data, std::size_t bytes) noexcept {
  if (source < 0 || bytes == 0) {  // a cancelled receive at shutdown
    release(data);
    return;
  }
  const auto& h = *reinterpret_cast<const buffer_header*>(data);
  MAILROOM_CHECK(bytes >= k_header_bytes && h.bytes == bytes,
                 "corrupt aggregation buffer from PE {} ({} bytes, header says {})", source, bytes,
                 h.bytes);
  if (MAILROOM_UNLIKELY(asked_ >= 0 || h.conveyor >= k_describe_request)) {
    // The job is stopping (describe_on waits for a reply): only control messages matter now.
    if (h.conveyor >= k_describe_request)
      control(source, data);
    else
      release_arrival(source, data);
  } else if (h.conveyor >= k_team_conveyor) {
    // A team's mailbox: buffers for one not constructed here yet wait, as for the job's.
    if (conveyor_core* c = team_conveyor(h.conveyor); c != nullptr) {
      if (MAILROOM_UNLIKELY(h.signature != c->signature())) mismatch(source, h, *c);
      deliver(*c, source, data);
    } else {
      early_[h.conveyor].emplace_back(source, data);
    }
  } else if (h.conveyor < next_id_) {
    conveyor_core* c = job_conveyor(h.conveyor);
    MAILROOM_CHECK(c != nullptr,
                   "a message arrived from PE {} for mailbox #{} after it was destroyed here: "
                   "was it destroyed before it terminated? (on the sender it is {})",
                   source, h.conveyor, describe_signature(h.signature));
    if (MAILROOM_UNLIKELY(h.signature != c->signature())) mismatch(source, h, *c);
    deliver(*c, source, data);
  } else {
    // Collective construction: the sender built this mailbox before we did. Keep, never lose.
    early_[h.conveyor].emplace_back(source, data);
  }
}

void exchange::acknowledged(int source, const std::uint32_t* ids, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) credit(ids[i], source);
}

void exchange::credit(std::uint32_t tagged_id, int peer) noexcept {
  const std::uint32_t id = tagged_id & ((1u << k_id_bits) - 1);
  // A conveyor may be gone already: it had terminated, so its own credits no longer matter,
  // but those it held of the link pool go back there.
  if (id >= k_team_conveyor) {
    // (A team's conveyor takes nothing from the link pool: an acknowledgement for one that is
    // gone has nothing to give back.)
    if (conveyor_core* c = team_conveyor(id); c != nullptr) c->credit(peer, tagged_id >> k_id_bits);
  } else if (conveyor_core* c = job_conveyor(id); c != nullptr) {
    c->credit(peer, tagged_id >> k_id_bits);
  } else if (const int l = routes_.lane(tagged_id >> k_id_bits, peer);
             l >= 0 && owed_[static_cast<std::size_t>(l)] > 0) {
    --owed_[static_cast<std::size_t>(l)];
    give_shared(static_cast<std::size_t>(l));
  }
}

}  // namespace mailroom::detail
