// SPDX-License-Identifier: MIT
// Properties of the simulated machine itself (mailroom/simulate.hpp), one per mode:
//   order N     every PE sends N messages to random PEs; prints a digest of the order in which
//               every PE handled them: the same seed must replay it, another seed change it
//   deadlock    PE 0 enters a collective the others never reach: the run must stop with a report
//   stall       PE 1 spins without polling: the stall watchdog must stop the run
//   throw       PE 2 throws: the run must stop naming the PE and the exception
// Run with MAILROOM_SIM set (the tests set it).
#include <mailroom/mailroom.hpp>
#include "transport/transport.hpp"  // (the simulator's own collectives, under test)

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <stdexcept>

namespace mr = mailroom;

namespace {

int order(std::int64_t n) {
  const int me = mr::this_pe().rank(), pes = mr::num_pes();
  std::uint64_t digest = 1469598103934665603ull;  // FNV-1a over the senders, in handling order
  std::int64_t handled = 0;
  {
    mr::actor sel{mr::mailbox<std::int64_t>([&](std::int64_t v, mr::pe from) {
      digest = (digest ^ static_cast<std::uint64_t>(from.rank())) * 1099511628211ull;
      digest = (digest ^ static_cast<std::uint64_t>(v)) * 1099511628211ull;
      ++handled;
    })};
    std::mt19937_64 rng(static_cast<std::uint64_t>(me) + 17);
    for (std::int64_t i = 0; i < n; ++i)
      sel.send(mr::pe(static_cast<int>(rng() % static_cast<std::uint64_t>(pes))), i);
    sel.done();
    sel.wait();
  }
  // Order-sensitive combination over PEs: sum of digest times (rank + 1).
  const auto mixed = static_cast<std::int64_t>(digest * static_cast<std::uint64_t>(me + 1));
  const auto all = static_cast<std::uint64_t>(mr::transport::allreduce_sum(mixed));
  const std::int64_t total = mr::transport::allreduce_sum(handled);
  if (me == 0)
    std::printf("order: %d PEs, %lld messages handled (expected %lld), digest %016llx\n", pes,
                static_cast<long long>(total), static_cast<long long>(n * pes),
                static_cast<unsigned long long>(all));
  return total == n * pes ? 0 : 1;
}

int run(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  const char* mode = argc > 1 ? argv[1] : "order";
  const int me = mr::this_pe().rank();
  if (std::strcmp(mode, "order") == 0) return order(argc > 2 ? std::atoll(argv[2]) : 100);
  if (std::strcmp(mode, "deadlock") == 0) {
    if (me == 0) (void)mr::transport::allreduce_sum(1);  // the others never join
    return 0;
  }
  if (std::strcmp(mode, "stall") == 0) {
    if (me == 1)
      for (volatile bool spin = true; spin;) {
      }
    return 0;
  }
  if (std::strcmp(mode, "throw") == 0) {
    if (me == 2) throw std::runtime_error("thrown on purpose");
    mr::barrier();
    return 0;
  }
  std::fprintf(stderr, "unknown mode %s\n", mode);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  auto m = mr::simulated_machine::from_environment();
  if (!m) {
    std::fprintf(stderr, "sim_test runs on the simulated machine: set MAILROOM_SIM (e.g. 64x8)\n");
    return 2;
  }
  return mr::simulate(*m, [&] { return run(argc, argv); });
}
