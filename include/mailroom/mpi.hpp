// SPDX-License-Identifier: MIT
// Running mailroom on a communicator of the program's: the one mailroom header that includes
// <mpi.h> (mailroom.hpp does not include it).
#pragma once

// (Without MPI's deprecated C++ bindings, as the library itself is built (src/CMakeLists.txt):
// a program built with oshc++, OpenSHMEM's wrapper, links no libmpi_cxx.)
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include "mailroom/runtime.hpp"

namespace mailroom {

/// `comm` as the runtime takes it: `mailroom::runtime rt(mailroom::mpi_communicator(comm));`.
/// MPI must be initialised.
[[nodiscard]] inline communicator mpi_communicator(MPI_Comm comm) {
  return communicator::from_fortran(static_cast<std::int64_t>(MPI_Comm_c2f(comm)));
}

}  // namespace mailroom
