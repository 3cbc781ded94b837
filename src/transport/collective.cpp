// Non-blocking collectives on a private communicator per termination protocol. The communicator
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

#include <deque>
#include <functional>

namespace mailroom::transport {

namespace {
// A duplicate of mailroom's communicator (or of a team's control communicator) asked for by a
// collective_context.
struct duplicate {
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Request req = MPI_REQUEST_NULL;
  bool started = false, done = false;
};
// Per communicator duplicated from: the duplicates asked for and not yet complete, in order.
struct duplicates {
  MPI_Comm parent;
  std::deque<duplicate*> queue;
};
std::vector<duplicates> g_duplicates;  // mailroom's communicator's first, once asked for
std::deque<duplicate*>& queue_of(MPI_Comm parent) {
  for (auto& d : g_duplicates)
    if (d.parent == parent) return d.queue;
  return g_duplicates.emplace_back(duplicates{parent, {}}).queue;
}
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

  explicit mpi_context(MPI_Comm parent) {
    queue_of(parent).push_back(&dup);
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

namespace detail {
bool advance_duplicates() {
  bool own_done = true;  // (of mailroom's communicator)
  for (auto& [parent, queue] : g_duplicates) {
    while (!queue.empty()) {
      duplicate& front = *queue.front();
      if (!front.started) {
        // (The duplicate inherits the communicator's error handler: errors come back to us.)
        MAILROOM_MPI(MPI_Comm_idup(parent, &front.comm, &front.req));
        front.started = true;
      }
      int flag = 0;
      MAILROOM_MPI(MPI_Test(&front.req, &flag, MPI_STATUS_IGNORE));
      if (flag == 0) break;
      front.done = true;
      queue.pop_front();
    }
    if (parent == comm() && !queue.empty()) own_done = false;
  }
  // (A team's communicator may be freed once its queue is empty: its entry goes with it.)
  std::erase_if(g_duplicates, [](const duplicates& d) { return d.queue.empty(); });
  return own_done;
}

std::unique_ptr<collective_context::impl> make_mpi_context(MPI_Comm parent) {
  return std::make_unique<mpi_context>(parent);
}
}  // namespace detail

collective_context::collective_context()
    : impl_(sim::active() ? sim::make_context() : std::make_unique<mpi_context>(detail::comm())) {}
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
