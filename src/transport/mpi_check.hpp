// The one checker every MPI return code goes through. Private to the transport layer.
#pragma once

#include <mpi.h>

#include "mailroom/error.hpp"

namespace mailroom::transport::detail {
[[noreturn]] void mpi_failed(int rc, const char* call, const char* file, int line) noexcept;
/// The PEs of this node (MPI_COMM_TYPE_SHARED, ranked by world rank), from init to finalize.
MPI_Comm node_comm() noexcept;
}  // namespace mailroom::transport::detail

#define MAILROOM_MPI(call)                                                              \
  do {                                                                                  \
    const int mailroom_rc_ = (call);                                                    \
    if (MAILROOM_UNLIKELY(mailroom_rc_ != MPI_SUCCESS))                                 \
      ::mailroom::transport::detail::mpi_failed(mailroom_rc_, #call, __FILE__, __LINE__); \
  } while (0)
