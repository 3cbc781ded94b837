// Non-blocking collectives on a private communicator per termination protocol.
#include "mailroom/transport.hpp"

#include "transport/mpi_check.hpp"

#include <vector>

namespace mailroom::transport {

struct collective_context::impl {
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Request req = MPI_REQUEST_NULL;
  std::vector<int> counts;
};

collective_context::collective_context() : impl_(std::make_unique<impl>()) {
  MAILROOM_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &impl_->comm));
  MAILROOM_MPI(MPI_Comm_set_errhandler(impl_->comm, MPI_ERRORS_RETURN));
}

collective_context::~collective_context() {
  if (impl_->req != MPI_REQUEST_NULL) MPI_Wait(&impl_->req, MPI_STATUS_IGNORE);
  MPI_Comm_free(&impl_->comm);
}

void collective_context::start_reduce_scatter_sum(const std::int64_t* in, std::int64_t* out) {
  MAILROOM_ASSERT(!busy());
  MAILROOM_MPI(MPI_Ireduce_scatter_block(in, out, 1, MPI_INT64_T, MPI_SUM, impl_->comm,
                                         &impl_->req));
}

void collective_context::start_allreduce_sum(const std::int64_t* in, std::int64_t* out, int n) {
  MAILROOM_ASSERT(!busy());
  MAILROOM_MPI(MPI_Iallreduce(in, out, n, MPI_INT64_T, MPI_SUM, impl_->comm, &impl_->req));
}

void collective_context::start_barrier() {
  MAILROOM_ASSERT(!busy());
  MAILROOM_MPI(MPI_Ibarrier(impl_->comm, &impl_->req));
}

bool collective_context::test() {
  if (impl_->req == MPI_REQUEST_NULL) return true;
  int flag = 0;
  MAILROOM_MPI(MPI_Test(&impl_->req, &flag, MPI_STATUS_IGNORE));
  return flag != 0;
}

bool collective_context::busy() const noexcept { return impl_->req != MPI_REQUEST_NULL; }

}  // namespace mailroom::transport
