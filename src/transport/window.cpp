// SPDX-License-Identifier: MIT
// The symmetric heap's MPI window (one-sided operations beyond the node), and the all-to-all
// exchanges of the memory layer.
#include "transport/transport.hpp"

#include "transport/backend.hpp"
#include "transport/mpi_check.hpp"
#include "transport/mpi_request.hpp"
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
// The symmetric heap's window: MPI_Win_create over the region (its memory is the heap itself),
// passive target for its whole life.
struct mpi_heap_window final : heap_window::impl {
  MPI_Win win = MPI_WIN_NULL;

  mpi_heap_window(std::byte* base, std::size_t bytes) {
    barrier();  // (MPI_Win_create blocks: nobody may still wait on another in mailroom)
    MAILROOM_MPI(
        MPI_Win_create(base, static_cast<MPI_Aint>(bytes), 1, MPI_INFO_NULL, detail::comm(), &win));
    MAILROOM_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MAILROOM_MPI(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
  }
  ~mpi_heap_window() override {
    MPI_Win_flush_all(win);
    barrier();
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
  }
  void get(int target, std::size_t offset, void* out, std::size_t bytes) override {
    MAILROOM_MPI(MPI_Get(out, detail::as_int(bytes, "get"), MPI_BYTE, target,
                         static_cast<MPI_Aint>(offset), static_cast<int>(bytes), MPI_BYTE, win));
    MAILROOM_MPI(MPI_Win_flush(target, win));
  }
  void put(int target, std::size_t offset, const void* in, std::size_t bytes) override {
    MAILROOM_MPI(MPI_Put(in, detail::as_int(bytes, "put"), MPI_BYTE, target,
                         static_cast<MPI_Aint>(offset), static_cast<int>(bytes), MPI_BYTE, win));
    MAILROOM_MPI(MPI_Win_flush(target, win));
  }
  std::unique_ptr<request> start_get(int target, std::size_t offset, void* out,
                                     std::size_t bytes) override {
    auto r = std::make_unique<detail::mpi_request>();
    MAILROOM_MPI(MPI_Rget(out, detail::as_int(bytes, "get"), MPI_BYTE, target,
                          static_cast<MPI_Aint>(offset), static_cast<int>(bytes), MPI_BYTE, win,
                          &r->req));
    return r;
  }
  std::unique_ptr<request> start_put(int target, std::size_t offset, const void* in,
                                     std::size_t bytes) override {
    auto r = std::make_unique<detail::mpi_request>();
    MAILROOM_MPI(MPI_Rput(in, detail::as_int(bytes, "put"), MPI_BYTE, target,
                          static_cast<MPI_Aint>(offset), static_cast<int>(bytes), MPI_BYTE, win,
                          &r->req));
    return r;
  }
  std::uint64_t atomic(int target, std::size_t offset, mailroom::detail::elem_type type,
                       atomic_op op, std::uint64_t operand, std::uint64_t compare) override {
    const MPI_Datatype t = detail::builtin_type(type);
    std::uint64_t old = 0;  // (little-endian: the low bytes hold a narrower integer)
    const auto disp = static_cast<MPI_Aint>(offset);
    if (op == atomic_op::compare_swap) {
      MAILROOM_MPI(MPI_Compare_and_swap(&operand, &compare, &old, t, target, disp, win));
    } else {
      MAILROOM_MPI(MPI_Fetch_and_op(&operand, &old, t, target, disp, mpi_op(op), win));
    }
    MAILROOM_MPI(MPI_Win_flush(target, win));
    return old;
  }
  std::unique_ptr<request> start_atomic(int target, std::size_t offset,
                                        mailroom::detail::elem_type type, atomic_op op,
                                        std::uint64_t operand, std::uint64_t compare,
                                        std::uint64_t* result) override {
    auto r = std::make_unique<detail::mpi_request>();
    if (op == atomic_op::compare_swap) {  // (MPI has no request-based compare-and-swap)
      *result = atomic(target, offset, type, op, operand, compare);
      return r;
    }
    r->operand = operand;
    *result = 0;
    MAILROOM_MPI(MPI_Rget_accumulate(
        &r->operand, 1, detail::builtin_type(type), result, 1, detail::builtin_type(type), target,
        static_cast<MPI_Aint>(offset), 1, detail::builtin_type(type), mpi_op(op), win, &r->req));
    return r;
  }
  void flush_all() override { MAILROOM_MPI(MPI_Win_flush_all(win)); }
  static MPI_Op mpi_op(atomic_op op) {
    switch (op) {
      case atomic_op::add:
        return MPI_SUM;
      case atomic_op::band:
        return MPI_BAND;
      case atomic_op::bor:
        return MPI_BOR;
      case atomic_op::bxor:
        return MPI_BXOR;
      case atomic_op::swap:
        return MPI_REPLACE;
      case atomic_op::load:
      case atomic_op::compare_swap:
        break;
    }
    return MPI_NO_OP;
  }
};
}  // namespace

heap_window::heap_window(std::byte* base, std::size_t bytes)
    : impl_(sim::active() ? sim::make_heap_window(base, bytes)
                          : std::make_unique<mpi_heap_window>(base, bytes)) {}
heap_window::~heap_window() = default;
void heap_window::get(int target, std::size_t offset, void* out, std::size_t bytes) {
  impl_->get(target, offset, out, bytes);
}
void heap_window::put(int target, std::size_t offset, const void* in, std::size_t bytes) {
  impl_->put(target, offset, in, bytes);
}
std::unique_ptr<request> heap_window::start_get(int target, std::size_t offset, void* out,
                                                std::size_t bytes) {
  return impl_->start_get(target, offset, out, bytes);
}
std::unique_ptr<request> heap_window::start_put(int target, std::size_t offset, const void* in,
                                                std::size_t bytes) {
  return impl_->start_put(target, offset, in, bytes);
}
std::uint64_t heap_window::atomic(int target, std::size_t offset, mailroom::detail::elem_type type,
                                  atomic_op op, std::uint64_t operand, std::uint64_t compare) {
  return impl_->atomic(target, offset, type, op, operand, compare);
}
std::unique_ptr<request> heap_window::start_atomic(int target, std::size_t offset,
                                                   mailroom::detail::elem_type type, atomic_op op,
                                                   std::uint64_t operand, std::uint64_t compare,
                                                   std::uint64_t* result) {
  return impl_->start_atomic(target, offset, type, op, operand, compare, result);
}
void heap_window::flush_all() { impl_->flush_all(); }

}  // namespace mailroom::transport
