// SPDX-License-Identifier: MIT
// The simulated machine's collectives: the meetings that each is (of the job, a node or a group),
// the termination protocols' non-blocking ones (sim_context) and the program's groups (sim_group).
#include "transport/sim.hpp"

#include "mailroom/error.hpp"

#include "transport/backend.hpp"
#include "transport/sim_engine.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <tuple>
#include <vector>

namespace mailroom::transport::sim {

// ---- meetings (collectives) --------------------------------------------------------------------
namespace {

// Members that wait for a meeting with nothing else to do sleep (out of the ready queue: a
// thousand PEs in a barrier cost no turns) until the member they wait for arrives.
void wake(meeting& g) {
  engine& e = eng();
  for (fiber* f : g.sleepers) {
    if (!f->asleep) continue;  // (woken already, as a holder of another meeting)
    f->asleep = false;
    f->clock = std::max(f->clock, g.last_arrival);
    e.ready.emplace(f->clock, e.rng(), f->pe);
  }
  g.sleepers.clear();
}

double meeting_latency(int members) {
  const double hops = std::ceil(std::log2(std::max(members, 2)));
  return eng().m.network_latency * hops;
}

}  // namespace

// One step of a member's wait: the progress engine while mailroom is active here, else sleep.
void wait_in(meeting& g, const char* what, bool progress) {
  if (progress && runtime_active()) {
    wait_step(what, true);
    return;
  }
  fiber& f = me();
  f.asleep = true;
  g.sleepers.push_back(&f);
  switch_to_main(f);
}

meeting& arrive(meeting_key key, int expected, int member, const void* in) {
  engine& e = eng();
  auto [it, fresh] = e.meetings.try_emplace(key);
  meeting& g = it->second;
  if (fresh) {
    g.expected = expected;
    g.in.assign(static_cast<std::size_t>(expected), nullptr);
  }
  MAILROOM_ASSERT(g.expected == expected && member < expected);
  g.in[static_cast<std::size_t>(member)] = in;
  ++g.arrived;
  g.last_arrival = std::max(g.last_arrival, me().clock);
  e.activity();
  if (g.arrived == g.expected) {
    wake(g);
    for (fiber* f : g.holders)
      if (f->asleep) {
        f->asleep = false;
        f->clock = std::max(f->clock, g.last_arrival);
        e.ready.emplace(f->clock, e.rng(), f->pe);
      }
  }
  return g;
}

// After computing its result: waits until every member has (their arguments stay valid until
// then), takes the completion time, and the last to leave ends the meeting.
void leave(meeting_key key, meeting& g, const char* what, bool progress) {
  ++g.computed;
  eng().activity();
  if (g.computed == g.expected) wake(g);
  fiber& f = me();
  const char* outer = f.waiting;
  f.waiting = what;
  while (g.computed < g.expected) wait_in(g, what, progress);
  f.waiting = outer;
  f.clock = std::max(f.clock, g.last_arrival + meeting_latency(g.expected));
  if (++g.departed == g.expected) eng().meetings.erase(key);
}

bool computing_collectives() noexcept {
  if (g_engine == nullptr || g_engine->current == nullptr) return false;
  const auto& mine = me().to_compute;
  return std::any_of(mine.begin(), mine.end(),
                     [](const meeting* g) { return g->arrived == g->expected; });
}

namespace {

// ---- non-blocking collectives ------------------------------------------------------------------
// One collective of a group in flight: the member arrived with its input; it computes its result
// (from every member's input) once all have arrived, and completes once all have computed (their
// inputs stay valid until then). `keep` holds what its own input points into until then.
class sim_request final : public request {
 public:
  template <class F>
  sim_request(meeting_key key, int expected, int member, const void* in, F compute,
              std::shared_ptr<const void> keep = nullptr)
      : key_(key), compute_(std::move(compute)), keep_(std::move(keep)) {
    g_ = &arrive(key_, expected, member, in);
    me().to_compute.push_back(g_);
    g_->holders.push_back(&me());
  }
  ~sim_request() override {
    while (!test()) wait_step("a collective (destroyed while in flight)", false);
  }
  sim_request(const sim_request&) = delete;
  sim_request& operator=(const sim_request&) = delete;
  bool test() override {
    if (g_ == nullptr) return true;
    if (g_->arrived < g_->expected) return false;
    if (compute_) {
      compute_(g_->in);
      compute_ = nullptr;
      auto& mine = me().to_compute;
      *std::find(mine.begin(), mine.end(), g_) = mine.back();
      mine.pop_back();
      ++g_->computed;
      eng().activity();
      if (g_->computed == g_->expected) wake(*g_);
    }
    if (g_->computed < g_->expected) return false;
    fiber& f = me();
    f.clock = std::max(f.clock, g_->last_arrival + meeting_latency(g_->expected));
    if (++g_->departed == g_->expected) eng().meetings.erase(key_);
    g_ = nullptr;
    keep_.reset();
    return true;
  }
  // Asleep in the meeting while mailroom is not active here (woken when it completes), else
  // the progress engine's polls, as the transport's own collectives wait.
  bool wait_idle(const char* what) override {
    fiber& f = me();
    const char* outer = f.waiting;
    f.waiting = what;
    while (!test()) wait_in(*g_, what, true);
    f.waiting = outer;
    return true;
  }

 private:
  meeting_key key_;
  meeting* g_ = nullptr;
  std::function<void(const std::vector<const void*>&)> compute_;
  std::shared_ptr<const void> keep_;
};

class sim_context final : public collective_context::impl {
 public:
  // The job's: every PE makes its contexts in the same order.
  sim_context() : sim_context(1 + static_cast<std::int64_t>(me().contexts++), pes(), me().pe) {}
  // Among `size` members (this one of rank `rank`), meeting under `key`.
  sim_context(std::int64_t key, int size, int rank) : group_(key), size_(size), rank_(rank) {}
  void start_reduce_scatter_sum(const std::int64_t* in, std::int64_t* out) override {
    begin(in, [out, size = size_, rank = rank_](const std::vector<const void*>& all) {
      std::int64_t s = 0;
      for (int p = 0; p < size; ++p)
        s = wrapping_add(s, static_cast<const std::int64_t*>(all[p])[rank]);
      *out = s;
    });
  }
  void start_allreduce_sum(const std::int64_t* in, std::int64_t* out, int n) override {
    begin(in, [out, n, size = size_](const std::vector<const void*>& all) {
      for (int i = 0; i < n; ++i) {
        std::int64_t s = 0;
        for (int p = 0; p < size; ++p)
          s = wrapping_add(s, static_cast<const std::int64_t*>(all[p])[i]);
        out[i] = s;
      }
    });
  }
  void start_barrier() override {
    begin(&group_, [](const std::vector<const void*>&) {});
  }
  bool test() override {
    if (req_ == nullptr || !req_->test()) return req_ == nullptr;
    req_.reset();
    return true;
  }
  bool wait_idle(const char* what) override {
    if (req_ != nullptr) req_->wait_idle(what);
    req_.reset();
    return true;
  }
  [[nodiscard]] bool busy() const noexcept override { return req_ != nullptr; }

 private:
  template <class F>
  void begin(const void* in, F compute) {
    MAILROOM_ASSERT(req_ == nullptr);
    req_ = std::make_unique<sim_request>(meeting_key{group_, ops_++}, size_, rank_, in,
                                         std::move(compute));
  }
  std::int64_t group_;
  int size_, rank_;
  std::uint64_t ops_ = 0;
  std::unique_ptr<sim_request> req_;
};

// The program's collectives. Group ids: the world's, then one per split (the same on every
// member: the engine numbers each (parent, split, colour) once).
constexpr std::int64_t k_program_world = std::int64_t{1} << 40;

// inout = in[from] op ... op in[to - 1] op inout's first operand, folded from the right so that
// the result is x_from op x_from+1 op ... in rank order, as MPI's.
void fold(const std::vector<const void*>& all, int from, int to, void* out, std::size_t count,
          const mailroom::detail::reduction& r) {
  const std::size_t bytes = count * r.elem_bytes;
  if (bytes == 0) return;  // (the buffers of an empty reduction may be null)
  std::memcpy(out, all[static_cast<std::size_t>(to - 1)], bytes);
  for (int p = to - 2; p >= from; --p)
    r.combine(all[static_cast<std::size_t>(p)], out, count, r.ctx);
}

class sim_group final : public group {
 public:
  sim_group(std::int64_t id, int rank, int size, std::vector<int> members) : id_(id) {
    rank_ = rank;
    size_ = size;
    members_ = std::move(members);
  }

  std::unique_ptr<group> split(int colour, int key) override {
    const std::array<int, 2> mine{colour, key};
    const std::uint64_t seq = ops_++;
    std::unique_ptr<group> out;
    meet(id_, seq, size_, rank_, &mine, "team split", true,
         [&](const std::vector<const void*>& all) {
           if (colour < 0) return;
           std::vector<std::array<int, 3>> same;  // key, rank here, world rank
           for (int p = 0; p < size_; ++p) {
             const auto& a =
                 *static_cast<const std::array<int, 2>*>(all[static_cast<std::size_t>(p)]);
             if (a[0] == colour) same.push_back({a[1], p, world_rank(p)});
           }
           std::sort(same.begin(), same.end());
           std::vector<int> world;
           int rank = 0;
           for (const auto& m : same) {
             if (m[1] == rank_) rank = static_cast<int>(world.size());
             world.push_back(m[2]);
           }
           engine& e = eng();
           auto [it, fresh] = e.split_ids.try_emplace({id_, seq, colour}, e.next_split_id);
           if (fresh) ++e.next_split_id;
           const int n = static_cast<int>(world.size());
           out = std::make_unique<sim_group>(it->second, rank, n, std::move(world));
         });
    return out;
  }

  std::unique_ptr<collective_context::impl> make_context() override {
    // Keys of their own: far below zero (the job's contexts count up from 1, groups' meetings
    // are keyed by their ids, the nodes' by -1 - node), from the group's id and its members'
    // count of contexts. (Teams split from the world only: the world's selectors use the job's.)
    MAILROOM_ASSERT(id_ != k_program_world);
    const std::int64_t key =
        -(std::int64_t{1} << 62) - ((id_ - k_program_world) << 24 | contexts_++);
    return std::make_unique<sim_context>(key, size_, rank_);
  }

  std::unique_ptr<request> start_barrier() override {
    return begin(&id_, 0, [](const std::vector<const void*>&) {});
  }
  std::unique_ptr<request> start_allreduce(const void* in, void* out, std::size_t count,
                                           const mailroom::detail::reduction& r) override {
    return begin(in, count * r.elem_bytes,
                 [size = size_, out, count, r](const std::vector<const void*>& all) {
                   fold(all, 0, size, out, count, r);
                 });
  }
  std::unique_ptr<request> start_exscan(const void* in, void* out, std::size_t count,
                                        const mailroom::detail::reduction& r) override {
    return begin(in, count * r.elem_bytes,
                 [rank = rank_, out, count, r](const std::vector<const void*>& all) {
                   if (rank > 0) fold(all, 0, rank, out, count, r);
                 });
  }
  std::unique_ptr<request> start_broadcast(void* data, std::size_t bytes, int root) override {
    return begin(data, rank_ == root ? bytes : 0,
                 [rank = rank_, data, bytes, root](const std::vector<const void*>& all) {
                   if (rank != root) std::memcpy(data, all[static_cast<std::size_t>(root)], bytes);
                 });
  }
  std::unique_ptr<request> start_gather(const void* in, void* out, std::size_t bytes,
                                        int root) override {
    return begin(
        in, bytes,
        [rank = rank_, size = size_, out, bytes, root](const std::vector<const void*>& all) {
          if (rank == root) gather_all(all, size, out, bytes);
        });
  }
  std::unique_ptr<request> start_allgather(const void* in, void* out, std::size_t bytes) override {
    return begin(in, bytes, [size = size_, out, bytes](const std::vector<const void*>& all) {
      gather_all(all, size, out, bytes);
    });
  }
  std::unique_ptr<request> start_alltoall(const void* in, void* out, std::size_t bytes) override {
    return begin(in, bytes * static_cast<std::size_t>(size_),
                 [rank = rank_, size = size_, out, bytes](const std::vector<const void*>& all) {
                   for (int p = 0; p < size; ++p)
                     std::memcpy(static_cast<std::byte*>(out) + static_cast<std::size_t>(p) * bytes,
                                 static_cast<const std::byte*>(all[static_cast<std::size_t>(p)]) +
                                     static_cast<std::size_t>(rank) * bytes,
                                 bytes);
                 });
  }
  std::unique_ptr<request> start_alltoallv(const void* send, const int* send_counts,
                                           const int* send_displs, void* recv,
                                           const int* recv_counts, const int* recv_displs,
                                           std::size_t elem_bytes) override {
    // A copy of what is sent (see begin()), packed: only the elements sent, not the gaps
    // between the blocks (a BSP superstep sends a little of large buckets).
    struct side {
      std::vector<std::byte> send;
      std::vector<int> counts, displs;
    };
    auto mine = std::make_shared<side>();
    const auto n = static_cast<std::size_t>(size_);
    mine->counts.assign(send_counts, send_counts + n);
    mine->displs.resize(n);
    std::size_t total = 0;
    for (std::size_t p = 0; p < n; ++p) total += static_cast<std::size_t>(send_counts[p]);
    mine->send.resize(total * elem_bytes);
    const auto* b = static_cast<const std::byte*>(send);
    for (std::size_t p = 0, at = 0; p < n; ++p) {
      mine->displs[p] = static_cast<int>(at);
      const auto k = static_cast<std::size_t>(send_counts[p]);
      std::memcpy(mine->send.data() + at * elem_bytes,
                  b + static_cast<std::size_t>(send_displs[p]) * elem_bytes, k * elem_bytes);
      at += k;
    }
    return begin_kept(
        mine.get(),
        [rank = rank_, size = size_, recv, recv_counts, recv_displs,
         elem_bytes](const std::vector<const void*>& all) {
          for (int p = 0; p < size; ++p) {
            const auto& s = *static_cast<const side*>(all[static_cast<std::size_t>(p)]);
            const int k = s.counts[static_cast<std::size_t>(rank)];
            MAILROOM_CHECK(k == recv_counts[p],
                           "all_to_all_v: member {} sends {} elements to "
                           "member {}, which expects {}",
                           p, k, rank, recv_counts[p]);
            std::memcpy(
                static_cast<std::byte*>(recv) +
                    static_cast<std::size_t>(recv_displs[p]) * elem_bytes,
                s.send.data() +
                    static_cast<std::size_t>(s.displs[static_cast<std::size_t>(rank)]) * elem_bytes,
                static_cast<std::size_t>(k) * elem_bytes);
          }
        },
        mine);
  }

 private:
  static void gather_all(const std::vector<const void*>& all, int size, void* out,
                         std::size_t bytes) {
    for (int p = 0; p < size; ++p)
      std::memcpy(static_cast<std::byte*>(out) + static_cast<std::size_t>(p) * bytes,
                  all[static_cast<std::size_t>(p)], bytes);
  }
  // The members read each other's input while each runs, but an input may lie in the symmetric
  // heap, which is mapped for the running PE only: each member's input is copied first.
  template <class F>
  std::unique_ptr<request> begin(const void* in, std::size_t bytes, F compute) {
    const auto* b = static_cast<const std::byte*>(in);
    auto copy = std::make_shared<std::vector<std::byte>>(b, b + bytes);
    return begin_kept(copy->data(), std::move(compute), copy);
  }
  template <class F>
  std::unique_ptr<request> begin_kept(const void* in, F compute, std::shared_ptr<const void> keep) {
    return std::make_unique<sim_request>(meeting_key{id_, ops_++}, size_, rank_, in,
                                         std::move(compute), std::move(keep));
  }
  std::int64_t id_;
  std::uint64_t ops_ = 0;
  std::int64_t contexts_ = 0;
};

}  // namespace

std::unique_ptr<collective_context::impl> make_context() { return std::make_unique<sim_context>(); }
std::unique_ptr<group> make_world_group() {
  return std::make_unique<sim_group>(k_program_world, me().pe, pes(), std::vector<int>());
}

}  // namespace mailroom::transport::sim
