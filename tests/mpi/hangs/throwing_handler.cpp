// SPDX-License-Identifier: MIT
// A handler that throws: the job must stop with the exception's message, naming the rank, the
// selector and the mailbox, and the PE whose message it was handling; not unwind through the
// runtime and fail later with a wrong message.
#include <mailroom/mailroom.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace mr = mailroom;

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  const int pes = mr::num_pes();
  mr::actor a{mr::mailbox<std::int64_t>([&](std::int64_t slot) {
    if (slot == 7) throw std::out_of_range("slot " + std::to_string(slot) + " is not here");
  })};
  for (int d = 0; d < pes; ++d)
    for (std::int64_t slot = 0; slot < 10; ++slot) a.send(mr::pe(d), slot);
  a.done();
  try {
    a.wait();
  } catch (...) {
    // Must not get here: the runtime stops the job first.
  }
  mr::barrier();
  return 0;
}
