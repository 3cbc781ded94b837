// One-sided MPI for the naive baselines, and the all-to-all exchanges of the BSP baselines.
#include "mailroom/transport.hpp"

#include "transport/backend.hpp"
#include "transport/mpi_check.hpp"
#include "transport/sim.hpp"

#include <algorithm>

namespace mailroom::transport {

void allgather(int v, int* out) {
  if (sim::active()) return sim::allgather(v, out);
  MAILROOM_COLLECTIVE(MPI_Iallgather, &v, 1, MPI_INT, out, 1, MPI_INT, detail::comm());
}

void alltoall(const int* send, int* recv) {
  if (sim::active()) return sim::alltoall(send, recv);
  MAILROOM_COLLECTIVE(MPI_Ialltoall, send, 1, MPI_INT, recv, 1, MPI_INT, detail::comm());
}

void alltoallv(const void* send, const int* send_counts, const int* send_displs, void* recv,
               const int* recv_counts, const int* recv_displs, std::size_t elem_bytes) {
  if (sim::active())
    return sim::alltoallv(send, send_counts, send_displs, recv, recv_counts, recv_displs,
                          elem_bytes);
  MPI_Datatype t = MPI_DATATYPE_NULL;
  MAILROOM_MPI(MPI_Type_contiguous(static_cast<int>(elem_bytes), MPI_BYTE, &t));
  MAILROOM_MPI(MPI_Type_commit(&t));
  MAILROOM_COLLECTIVE(MPI_Ialltoallv, send, send_counts, send_displs, t, recv, recv_counts,
                      recv_displs, t, detail::comm());
  MAILROOM_MPI(MPI_Type_free(&t));
}

namespace {
struct mpi_window final : window::impl {
  MPI_Win win = MPI_WIN_NULL;
  std::int64_t* mem = nullptr;
  std::int64_t* user = nullptr;
  std::size_t n = 0;

  mpi_window(std::int64_t* base, std::size_t count) : user(base), n(count) {
    // MPI_Win_allocate blocks and has no non-blocking form: first a barrier that keeps mailroom
    // moving, so that no PE is still waiting on another in mailroom when one enters it.
    barrier();
    MAILROOM_MPI(MPI_Win_allocate(static_cast<MPI_Aint>(n * sizeof(std::int64_t)),
                                  sizeof(std::int64_t), MPI_INFO_NULL, detail::comm(), &mem,
                                  &win));
    MAILROOM_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    std::copy(base, base + n, mem);
    MAILROOM_MPI(MPI_Win_lock_all(0, win));
    fence();  // every PE's copy is in place before anyone reads or updates it
  }

  ~mpi_window() override {
    fence();  // every PE's updates have landed
    std::copy(mem, mem + n, user);
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
  }

  void add(int target, std::size_t index, std::int64_t value) override {
    MAILROOM_MPI(MPI_Accumulate(&value, 1, MPI_INT64_T, target, static_cast<MPI_Aint>(index), 1,
                                MPI_INT64_T, MPI_SUM, win));
    MAILROOM_MPI(MPI_Win_flush(target, win));
  }

  std::int64_t fetch_add(int target, std::size_t index, std::int64_t value) override {
    std::int64_t old = 0;
    MAILROOM_MPI(MPI_Fetch_and_op(&value, &old, MPI_INT64_T, target,
                                  static_cast<MPI_Aint>(index), MPI_SUM, win));
    MAILROOM_MPI(MPI_Win_flush(target, win));
    return old;
  }

  std::int64_t get(int target, std::size_t index) override {
    std::int64_t v = 0;
    MAILROOM_MPI(MPI_Get(&v, 1, MPI_INT64_T, target, static_cast<MPI_Aint>(index), 1,
                         MPI_INT64_T, win));
    MAILROOM_MPI(MPI_Win_flush(target, win));
    return v;
  }

  void put(int target, std::size_t index, std::int64_t value) override {
    MAILROOM_MPI(MPI_Put(&value, 1, MPI_INT64_T, target, static_cast<MPI_Aint>(index), 1,
                         MPI_INT64_T, win));
    MAILROOM_MPI(MPI_Win_flush(target, win));
  }

  std::int64_t compare_and_swap(int target, std::size_t index, std::int64_t expected,
                                std::int64_t desired) override {
    std::int64_t old = 0;
    MAILROOM_MPI(MPI_Compare_and_swap(&desired, &expected, &old, MPI_INT64_T, target,
                                      static_cast<MPI_Aint>(index), win));
    MAILROOM_MPI(MPI_Win_flush(target, win));
    return old;
  }

  void fence() override {
    MAILROOM_MPI(MPI_Win_flush_all(win));
    MAILROOM_MPI(MPI_Win_sync(win));
    barrier();
    MAILROOM_MPI(MPI_Win_sync(win));
  }
};
}  // namespace

window::window(std::int64_t* base, std::size_t n)
    : impl_(sim::active() ? sim::make_window(base, n) : std::make_unique<mpi_window>(base, n)) {}
window::~window() = default;

void window::add(int target, std::size_t index, std::int64_t value) {
  impl_->add(target, index, value);
}
std::int64_t window::fetch_add(int target, std::size_t index, std::int64_t value) {
  return impl_->fetch_add(target, index, value);
}
std::int64_t window::get(int target, std::size_t index) { return impl_->get(target, index); }
void window::put(int target, std::size_t index, std::int64_t value) {
  impl_->put(target, index, value);
}
std::int64_t window::compare_and_swap(int target, std::size_t index, std::int64_t expected,
                                      std::int64_t desired) {
  return impl_->compare_and_swap(target, index, expected, desired);
}
void window::fence() { impl_->fence(); }

}  // namespace mailroom::transport
