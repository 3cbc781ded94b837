// SPDX-License-Identifier: MIT
// A wait that cannot progress, with the watchdog on by default (the test shortens it with
// MAILROOM_WATCHDOG): PE 0 enters MPI_Barrier on the program's communicator without calling
// mr::quiesce() first, while the other PEs are still sending it messages. The senders run out of
// credits and wait for PE 0's acknowledgements, which never come; their watchdog must stop the
// job, saying that they wait in a send for credits and that PE 0 has not acknowledged buffers.
#include <mpi.h>
#include <mailroom/mailroom.hpp>

#include <cstdint>

namespace mr = mailroom;

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  const int me = mr::this_pe().rank();
  std::int64_t got = 0;
  mr::actor a{mr::mailbox<std::int64_t>([&](std::int64_t v) { got += v; })};
  if (me != 0)
    for (std::int64_t i = 0; i < 100000000; ++i) a.send(mr::pe(0), 1);
  MPI_Barrier(MPI_COMM_WORLD);  // the mistake: mr::quiesce() belongs before it
  a.done();
  a.wait();
  return 0;
}
