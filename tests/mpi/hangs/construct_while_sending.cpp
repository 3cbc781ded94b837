// SPDX-License-Identifier: MIT
// Constructing the next actor while a peer still sends on the previous one: PE 0, which has
// nothing to send, calls done() and goes straight on to construct a second actor, allocate
// symmetric memory and generate a matrix (all collective), while every other PE is still
// sending it `n` messages on the first. Construction and the collectives must keep taking in
// buffers (a blocking MPI_Comm_dup or MPI_Allreduce there would strand the senders, which wait
// for PE 0's acknowledgements). Every message must then be handled exactly once.
#include <mailroom/generators.hpp>
#include <mailroom/mailroom.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace mr = mailroom;

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  const int me = mr::this_pe().rank(), pes = mr::num_pes();
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 1000000;

  std::int64_t first = 0, second = 0;
  mr::actor a{mr::mailbox<std::int64_t>([&](std::int64_t v) { first += v; })};
  if (me != 0)
    for (std::int64_t i = 0; i < n; ++i) a.send(mr::pe(0), 1);
  a.done();
  // PE 0 gets here at once; the others after their last send.
  mr::actor b{mr::mailbox<std::int64_t>([&](std::int64_t v) { second += v; })};
  {
    mr::symmetric_scope scope;
    auto table = mr::symmetric_array<std::int64_t>(1000);  // collective
    table[0] = me;
  }
  const auto m = mr::erdos_renyi(1000, 10.0, 7);  // collective, with an all-to-all inside
  b.send(mr::pe((me + 1) % pes), 1);
  b.done();
  a.wait();
  b.wait();

  int failures = 0;
  const std::int64_t expected = me == 0 ? n * (pes - 1) : 0;
  if (first != expected) {
    std::printf("rank %d: the first actor handled %lld messages, expected %lld\n", me,
                static_cast<long long>(first), static_cast<long long>(expected));
    ++failures;
  }
  if (second != 1) {
    std::printf("rank %d: the second actor handled %lld messages, expected 1\n", me,
                static_cast<long long>(second));
    ++failures;
  }
  if (m.global_nnz() <= 0) {
    std::printf("rank %d: the generated matrix is empty\n", me);
    ++failures;
  }
  if (failures == 0 && me == 0) std::printf("construct_while_sending: PASSED\n");
  return failures == 0 ? 0 : 1;
}
