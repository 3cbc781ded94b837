// SPDX-License-Identifier: MIT
// A mailbox left disabled at wait(): it cannot terminate, so wait() would never return. The
// watchdog must say which mailbox is disabled (and how much waits for it), and stop the job.
#include <mailroom/mailroom.hpp>

namespace mr = mailroom;

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  std::int64_t got = 0;
  mr::actor a{mr::mailbox<std::int64_t>([&](std::int64_t v) { got += v; })};
  if (mr::this_pe().rank() == 0) a.disable();  // and never enabled
  for (int p = 0; p < mr::num_pes(); ++p) a.send(mr::pe(p), 1);
  a.done();
  a.wait();
}
