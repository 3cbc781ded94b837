// SPDX-License-Identifier: MIT
// Misuse: MAILROOM_WORKERS=2 in a program that initialised MPI with MPI_THREAD_SINGLE, which
// allows no other thread in the process: the job stops with the reason before a worker starts.
// Run with 2 workers, under Open MPI and MPICH.
#include <mailroom/mailroom.hpp>

#include <mpi.h>

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
  if (provided == MPI_THREAD_SINGLE) {
    const mailroom::runtime rt(argc, argv);  // stops the job
  }
  MPI_Finalize();
  return provided == MPI_THREAD_SINGLE ? 0 : 3;  // not reached when the check works
}
