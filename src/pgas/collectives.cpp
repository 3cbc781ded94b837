// SPDX-License-Identifier: MIT
// The public collectives: each starts one operation of the team's transport group and becomes a
// pending operation of the scheduler, whose progress engine completes it (and its future).
#include "mailroom/collectives.hpp"

#include "runtime/engine.hpp"
#include "runtime/lifetime.hpp"

#include "common/pe_local.hpp"
#include "common/trace.hpp"
#include "pgas/pending.hpp"
#include "runtime/team_state.hpp"

#include <limits>
#include <numeric>

namespace mailroom::detail {

namespace {
std::uint64_t g_started = 0;  // collectives this PE has started (for the watchdog's report)
MAILROOM_PE_LOCAL(g_started);

// Starts the collective; with `wait`, completes it here (the blocking forms: no future to make
// and complete) and returns a ready future.
template <class Start>
future<void> launch(const team& t, const char* what, bool wait, Start start) {
  const runtime_turn turn;
  MAILROOM_CHECK(!scheduler::in_handler(),
                 "{} called from a handler: collectives are started by every member in the same "
                 "order from user code",
                 what);
  engine::check_not_completing(what);
  transport::group& g = *state_of(t).group;
  const double traced_from = MAILROOM_UNLIKELY(trace::g_on) ? trace::now() : -1.0;
  std::unique_ptr<transport::request> req = start(g);
  const std::uint64_t serial = g_started++;
  const op_label label{what, "over {} PEs (collective #{} started here)",
                       static_cast<std::uint64_t>(g.size()), serial, traced_from};
  if (wait) {
    if (!req->wait_idle(what))
      while (!req->test()) engine::progress_waiting(what);
    if (MAILROOM_UNLIKELY(traced_from >= 0)) trace_operation(label);
    return make_ready_future();
  }
  return track(std::move(req), label);
}
}  // namespace

future<void> start_all_reduce(const team& t, const void* in, void* out, std::size_t count,
                              const reduction& r, bool wait) {
  return launch(t, "all_reduce", wait,
                [&](transport::group& g) { return g.start_allreduce(in, out, count, r); });
}
future<void> start_exclusive_scan(const team& t, const void* in, void* out, std::size_t count,
                                  const reduction& r, bool wait) {
  return launch(t, "exclusive_scan", wait,
                [&](transport::group& g) { return g.start_exscan(in, out, count, r); });
}
void all_reduce_now(const team& t, const void* in, void* out, std::size_t count,
                    const reduction& r) {
  (void)start_all_reduce(t, in, out, count, r, true);
}
void exclusive_scan_now(const team& t, const void* in, void* out, std::size_t count,
                        const reduction& r) {
  (void)start_exclusive_scan(t, in, out, count, r, true);
}
future<void> start_broadcast(const team& t, void* data, std::size_t bytes, int root, bool wait) {
  MAILROOM_CHECK(root >= 0 && root < t.size(),
                 "broadcast: root {} is not a member rank in "
                 "[0, {})",
                 root, t.size());
  return launch(t, "broadcast", wait,
                [&](transport::group& g) { return g.start_broadcast(data, bytes, root); });
}
future<void> start_gather(const team& t, const void* in, void* out, std::size_t bytes, int root,
                          bool wait) {
  MAILROOM_CHECK(root >= 0 && root < t.size(), "gather: root {} is not a member rank in [0, {})",
                 root, t.size());
  return launch(t, "gather", wait,
                [&](transport::group& g) { return g.start_gather(in, out, bytes, root); });
}
future<void> start_all_gather(const team& t, const void* in, void* out, std::size_t bytes,
                              bool wait) {
  return launch(t, "all_gather", wait,
                [&](transport::group& g) { return g.start_allgather(in, out, bytes); });
}
future<void> start_all_to_all(const team& t, const void* in, void* out, std::size_t bytes,
                              bool wait) {
  return launch(t, "all_to_all", wait,
                [&](transport::group& g) { return g.start_alltoall(in, out, bytes); });
}

future<void> start_all_to_all_v(const team& t, const void* send, std::span<const int> counts,
                                std::span<const int> displs, std::size_t elem_bytes,
                                const std::function<void*(std::size_t)>& out, bool wait) {
  const auto n = static_cast<std::size_t>(t.size());
  MAILROOM_CHECK(counts.size() == n && (displs.empty() || displs.size() == n),
                 "all_to_all_v: {} counts and {} displacements for a team of {}", counts.size(),
                 displs.size(), n);
  // What the second step needs, kept until it completes: both sides' counts and displacements.
  struct sides {
    std::vector<int> send_counts, send_displs, recv_counts, recv_displs;
  };
  auto s = std::make_shared<sides>();
  s->send_counts.assign(counts.begin(), counts.end());
  s->send_displs.resize(n);
  if (displs.empty())
    std::exclusive_scan(counts.begin(), counts.end(), s->send_displs.begin(), 0);
  else
    s->send_displs.assign(displs.begin(), displs.end());
  s->recv_counts.resize(n);
  s->recv_displs.resize(n);
  // The counts first, waited for here: a data step started later from a continuation could
  // be started in another order than the member's other collectives, which MPI would mismatch.
  start_all_to_all(t, s->send_counts.data(), s->recv_counts.data(), sizeof(int), true);
  std::int64_t total = 0;
  for (std::size_t p = 0; p < n; ++p) {
    MAILROOM_CHECK(total <= std::numeric_limits<int>::max(),
                   "all_to_all_v: more than 2^31 - 1 "
                   "elements arrive at this member; MPI counts are ints");
    s->recv_displs[p] = static_cast<int>(total);
    total += s->recv_counts[p];
  }
  void* recv = out(static_cast<std::size_t>(total));
  return launch(t, "all_to_all_v", wait,
                [&](transport::group& g) {
                  return g.start_alltoallv(send, s->send_counts.data(), s->send_displs.data(), recv,
                                           s->recv_counts.data(), s->recv_displs.data(),
                                           elem_bytes);
                })
      .then([s] {});
}

future<void> start_all_to_all_v(const team& t, const void* send, const int* send_counts,
                                const int* send_displs, void* recv, const int* recv_counts,
                                const int* recv_displs, std::size_t elem_bytes, bool wait) {
  return launch(t, "all_to_all_v", wait, [&](transport::group& g) {
    return g.start_alltoallv(send, send_counts, send_displs, recv, recv_counts, recv_displs,
                             elem_bytes);
  });
}

future<void> start_barrier(const team& t, bool wait) {
  run_at_barrier();  // (puts complete, the global view's writes at their owners)
  return launch(t, "barrier", wait, [](transport::group& g) { return g.start_barrier(); });
}

}  // namespace mailroom::detail
