// One-sided MPI for the naive baselines, and the all-to-all exchanges of the BSP baselines.
#include "mailroom/transport.hpp"

#include "transport/mpi_check.hpp"

#include <algorithm>

namespace mailroom::transport {

void allgather(int v, int* out) {
  MAILROOM_COLLECTIVE(MPI_Iallgather, &v, 1, MPI_INT, out, 1, MPI_INT, detail::comm());
}

void alltoall(const int* send, int* recv) {
  MAILROOM_COLLECTIVE(MPI_Ialltoall, send, 1, MPI_INT, recv, 1, MPI_INT, detail::comm());
}

void alltoallv(const void* send, const int* send_counts, const int* send_displs, void* recv,
               const int* recv_counts, const int* recv_displs, std::size_t elem_bytes) {
  MPI_Datatype t = MPI_DATATYPE_NULL;
  MAILROOM_MPI(MPI_Type_contiguous(static_cast<int>(elem_bytes), MPI_BYTE, &t));
  MAILROOM_MPI(MPI_Type_commit(&t));
  MAILROOM_COLLECTIVE(MPI_Ialltoallv, send, send_counts, send_displs, t, recv, recv_counts,
                      recv_displs, t, detail::comm());
  MAILROOM_MPI(MPI_Type_free(&t));
}

struct window::impl {
  MPI_Win win = MPI_WIN_NULL;
  std::int64_t* mem = nullptr;
  std::int64_t* user = nullptr;
  std::size_t n = 0;
};

window::window(std::int64_t* base, std::size_t n) : impl_(std::make_unique<impl>()) {
  impl_->user = base;
  impl_->n = n;
  // MPI_Win_allocate blocks and has no non-blocking form: first a barrier that keeps mailroom
  // moving, so that no PE is still waiting on another in mailroom when one enters it.
  barrier();
  MAILROOM_MPI(MPI_Win_allocate(static_cast<MPI_Aint>(n * sizeof(std::int64_t)),
                                sizeof(std::int64_t), MPI_INFO_NULL, detail::comm(), &impl_->mem,
                                &impl_->win));
  MAILROOM_MPI(MPI_Win_set_errhandler(impl_->win, MPI_ERRORS_RETURN));
  std::copy(base, base + n, impl_->mem);
  MAILROOM_MPI(MPI_Win_lock_all(0, impl_->win));
  fence();  // every PE's copy is in place before anyone reads or updates it
}

window::~window() {
  fence();  // every PE's updates have landed
  std::copy(impl_->mem, impl_->mem + impl_->n, impl_->user);
  MPI_Win_unlock_all(impl_->win);
  MPI_Win_free(&impl_->win);
}

void window::add(int target, std::size_t index, std::int64_t value) {
  MAILROOM_MPI(MPI_Accumulate(&value, 1, MPI_INT64_T, target, static_cast<MPI_Aint>(index), 1,
                              MPI_INT64_T, MPI_SUM, impl_->win));
  MAILROOM_MPI(MPI_Win_flush(target, impl_->win));
}

std::int64_t window::fetch_add(int target, std::size_t index, std::int64_t value) {
  std::int64_t old = 0;
  MAILROOM_MPI(MPI_Fetch_and_op(&value, &old, MPI_INT64_T, target, static_cast<MPI_Aint>(index),
                                MPI_SUM, impl_->win));
  MAILROOM_MPI(MPI_Win_flush(target, impl_->win));
  return old;
}

std::int64_t window::get(int target, std::size_t index) {
  std::int64_t v = 0;
  MAILROOM_MPI(MPI_Get(&v, 1, MPI_INT64_T, target, static_cast<MPI_Aint>(index), 1, MPI_INT64_T,
                       impl_->win));
  MAILROOM_MPI(MPI_Win_flush(target, impl_->win));
  return v;
}

void window::put(int target, std::size_t index, std::int64_t value) {
  MAILROOM_MPI(MPI_Put(&value, 1, MPI_INT64_T, target, static_cast<MPI_Aint>(index), 1,
                       MPI_INT64_T, impl_->win));
  MAILROOM_MPI(MPI_Win_flush(target, impl_->win));
}

std::int64_t window::compare_and_swap(int target, std::size_t index, std::int64_t expected,
                                      std::int64_t desired) {
  std::int64_t old = 0;
  MAILROOM_MPI(MPI_Compare_and_swap(&desired, &expected, &old, MPI_INT64_T, target,
                                    static_cast<MPI_Aint>(index), impl_->win));
  MAILROOM_MPI(MPI_Win_flush(target, impl_->win));
  return old;
}

void window::fence() {
  MAILROOM_MPI(MPI_Win_flush_all(impl_->win));
  MAILROOM_MPI(MPI_Win_sync(impl_->win));
  barrier();
  MAILROOM_MPI(MPI_Win_sync(impl_->win));
}

}  // namespace mailroom::transport
