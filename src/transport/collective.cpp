// SPDX-License-Identifier: MIT
// Non-blocking collectives for the termination protocols: the job's on a private communicator per
// protocol, a team's in point-to-point messages (tree_context, below). The communicator
// is duplicated without blocking (MPI_Comm_idup): a mailbox is constructed while peers may still
// be sending on earlier ones, and a blocking duplicate would stop this PE from taking their
// buffers in (and them from ever reaching the duplicate).
//
// The duplicates of mailroom's communicator run one at a time, in the order they were asked for
// (the same on every PE), and no other collective starts on that communicator while one runs:
// Open MPI 4.1 deadlocks when an MPI_Comm_idup overlaps another idup or collective on the same
// communicator (seen here at 3 PEs: two of them never completed their idup; Open MPI issue 2025
// describes the same and this cure).
#include "transport/transport.hpp"

#include "transport/backend.hpp"
#include "transport/mpi_check.hpp"
#include "transport/sim.hpp"

#include <algorithm>
#include <array>
#include <deque>
#include <functional>
#include <vector>

namespace mailroom::transport {

namespace {
// A duplicate of mailroom's communicator asked for by a collective_context.
struct duplicate {
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Request req = MPI_REQUEST_NULL;
  bool started = false, done = false;
};
std::deque<duplicate*> g_duplicates;  // asked for, not yet complete; in order
}  // namespace

struct mpi_context final : collective_context::impl {
  duplicate dup;
  MPI_Comm& comm = dup.comm;
  MPI_Request req = MPI_REQUEST_NULL;
  std::function<void()> start;  // an operation asked for before the duplicate was ready
  bool started = false;         // an operation was asked for and not yet completed

  bool ready() {
    if (!dup.done) detail::advance_duplicates();
    return dup.done;
  }
  // Runs `op` now if the duplicate is ready, else once it is (from test()).
  template <class Op>
  void begin(Op op) {
    MAILROOM_ASSERT(!started);
    started = true;
    if (ready()) {
      op(comm, &req);
    } else {
      start = [this, op] { op(comm, &req); };
    }
  }

  mpi_context() {
    g_duplicates.push_back(&dup);
    detail::advance_duplicates();
  }
  ~mpi_context() override {
    // Every PE asks for the same duplicates in the same order and advances them whenever it
    // polls, so this completes without this PE doing anything but asking MPI.
    while (!dup.done) detail::advance_duplicates();
    if (req != MPI_REQUEST_NULL) MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Comm_free(&comm);
  }

  void start_reduce_scatter_sum(const std::int64_t* in, std::int64_t* out) override {
    begin([in, out](MPI_Comm c, MPI_Request* r) {
      MAILROOM_MPI(MPI_Ireduce_scatter_block(in, out, 1, MPI_INT64_T, MPI_SUM, c, r));
    });
  }
  void start_allreduce_sum(const std::int64_t* in, std::int64_t* out, int n) override {
    begin([in, out, n](MPI_Comm c, MPI_Request* r) {
      MAILROOM_MPI(MPI_Iallreduce(in, out, n, MPI_INT64_T, MPI_SUM, c, r));
    });
  }
  void start_barrier() override {
    begin([](MPI_Comm c, MPI_Request* r) { MAILROOM_MPI(MPI_Ibarrier(c, r)); });
  }
  bool test() override {
    if (!started) return true;
    if (!ready()) return false;
    if (start) {
      start();
      start = nullptr;
    }
    int flag = 0;
    MAILROOM_MPI(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
    if (flag == 0) return false;
    started = false;
    return true;
  }
  [[nodiscard]] bool busy() const noexcept override { return started; }
};

// Among the members of a team, over its control communicator: point-to-point messages on a tag
// of the context's own, up a binary tree (member r's children are 2r + 1 and 2r + 2) and back
// down; no duplicate communicator. Open MPI 4.1 agrees on the ids of non-blocking duplicates in
// one order across all of a process's communicators, so a team's duplicate could wait behind
// one of mailroom's communicator, and so on PEs outside the team. One operation at a time; a
// member's next one cannot match this one's messages (the up and down links of a pair are
// separate, and MPI keeps each in order).
struct tree_context final : collective_context::impl {
  tree_context(MPI_Comm c, int t) : comm_(c), tag_(t) {
    MAILROOM_MPI(MPI_Comm_rank(comm_, &rank_));
    MAILROOM_MPI(MPI_Comm_size(comm_, &size_));
    for (int k = 1; k <= 2; ++k)
      if (2 * rank_ + k < size_) children_.push_back(2 * rank_ + k);
  }
  ~tree_context() override {
    while (busy()) test();  // (the members finish the operation together)
  }

  void start_reduce_scatter_sum(const std::int64_t* in, std::int64_t* out) override {
    // (Every member's entry of the sum: the whole sum, this member's taken at the end.)
    begin(in, size_, out, rank_);
  }
  void start_allreduce_sum(const std::int64_t* in, std::int64_t* out, int n) override {
    begin(in, n, out, -1);
  }
  void start_barrier() override { begin(nullptr, 0, nullptr, -1); }

  bool test() override {
    int flag = 0;
    switch (stage_) {
      case stage_t::idle:
        return true;
      case stage_t::up:
        MAILROOM_MPI(MPI_Testall(static_cast<int>(children_.size()), reqs_.data(), &flag,
                                 MPI_STATUSES_IGNORE));
        if (flag == 0) return false;
        for (std::size_t c = 0; c < children_.size(); ++c)
          for (std::size_t i = 0; i < acc_.size(); ++i) acc_[i] += got_[c][i];
        if (rank_ == 0) {
          down();
          return test();
        }
        sent_ = acc_;
        MAILROOM_MPI(MPI_Isend(sent_.data(), n_, MPI_INT64_T, parent(), tag_, comm_, &reqs_[0]));
        MAILROOM_MPI(MPI_Irecv(acc_.data(), n_, MPI_INT64_T, parent(), tag_, comm_, &reqs_[1]));
        stage_ = stage_t::from_parent;
        [[fallthrough]];
      case stage_t::from_parent:
        MAILROOM_MPI(MPI_Testall(2, reqs_.data(), &flag, MPI_STATUSES_IGNORE));
        if (flag == 0) return false;
        down();
        [[fallthrough]];
      case stage_t::down:
        MAILROOM_MPI(MPI_Testall(static_cast<int>(children_.size()), reqs_.data(), &flag,
                                 MPI_STATUSES_IGNORE));
        if (flag == 0) return false;
        if (out_ != nullptr) {
          if (pick_ >= 0)
            out_[0] = acc_[static_cast<std::size_t>(pick_)];
          else
            std::copy(acc_.begin(), acc_.end(), out_);
        }
        stage_ = stage_t::idle;
        return true;
    }
    return false;
  }
  [[nodiscard]] bool busy() const noexcept override { return stage_ != stage_t::idle; }

 private:
  [[nodiscard]] int parent() const noexcept { return (rank_ - 1) / 2; }
  void begin(const std::int64_t* in, int count, std::int64_t* result, int take) {
    MAILROOM_ASSERT(stage_ == stage_t::idle);
    n_ = count;
    out_ = result;
    pick_ = take;
    acc_.assign(in, in + n_);
    for (std::size_t c = 0; c < children_.size(); ++c) {
      got_[c].resize(static_cast<std::size_t>(n_));
      MAILROOM_MPI(
          MPI_Irecv(got_[c].data(), n_, MPI_INT64_T, children_[c], tag_, comm_, &reqs_[c]));
    }
    stage_ = stage_t::up;
  }
  // Sends the result to the children.
  void down() {
    for (std::size_t c = 0; c < children_.size(); ++c)
      MAILROOM_MPI(MPI_Isend(acc_.data(), n_, MPI_INT64_T, children_[c], tag_, comm_, &reqs_[c]));
    stage_ = stage_t::down;
  }

  MPI_Comm comm_;
  int tag_, rank_ = 0, size_ = 1;
  std::vector<int> children_;
  enum class stage_t : std::uint8_t { idle, up, from_parent, down } stage_ = stage_t::idle;
  int n_ = 0, pick_ = -1;
  std::int64_t* out_ = nullptr;
  std::vector<std::int64_t> acc_, sent_;
  std::array<std::vector<std::int64_t>, 2> got_;
  std::array<MPI_Request, 2> reqs_{MPI_REQUEST_NULL, MPI_REQUEST_NULL};
};

namespace detail {
std::unique_ptr<collective_context::impl> make_tree_context(MPI_Comm comm, int tag) {
  return std::make_unique<tree_context>(comm, tag);
}

bool advance_duplicates() {
  while (!g_duplicates.empty()) {
    duplicate& front = *g_duplicates.front();
    if (!front.started) {
      // (The duplicate inherits the communicator's error handler: errors come back to us.)
      MAILROOM_MPI(MPI_Comm_idup(comm(), &front.comm, &front.req));
      front.started = true;
    }
    int flag = 0;
    MAILROOM_MPI(MPI_Test(&front.req, &flag, MPI_STATUS_IGNORE));
    if (flag == 0) return false;
    front.done = true;
    g_duplicates.pop_front();
  }
  return true;
}
}  // namespace detail

collective_context::collective_context()
    : impl_(sim::active() ? sim::make_context() : std::make_unique<mpi_context>()) {}
collective_context::collective_context(group& g) : impl_(g.make_context()) {}
collective_context::~collective_context() = default;

void collective_context::start_reduce_scatter_sum(const std::int64_t* in, std::int64_t* out) {
  impl_->start_reduce_scatter_sum(in, out);
}
void collective_context::start_allreduce_sum(const std::int64_t* in, std::int64_t* out, int n) {
  impl_->start_allreduce_sum(in, out, n);
}
void collective_context::start_barrier() { impl_->start_barrier(); }
bool collective_context::test() { return impl_->test(); }
bool collective_context::wait_idle(const char* what) { return impl_->wait_idle(what); }
bool collective_context::busy() const noexcept { return impl_->busy(); }

}  // namespace mailroom::transport
