// SPDX-License-Identifier: MIT
// Distributions at work, checked exactly against a recount on every PE: actor sends by global
// index (the local index as the message, and at<T> messages), a selector's sends from a handler,
// a distributed array's one-sided operations (atomic adds from every PE, puts then gets) and
// gather from it; under cyclic, block, block_cyclic and a user-defined distribution.
#include <mailroom/mailroom.hpp>

#include "expect.hpp"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace mr = mailroom;

namespace {

using mailroom_test::g_me;
using mailroom_test::g_pes;
using mailroom_test::mix;

// Blocks in reverse PE order, with only the members a distribution must have.
struct reversed_block {
  std::int64_t n, b;
  int P;
  [[nodiscard]] mr::pe owner(std::int64_t g) const { return mr::pe(P - 1 - g / b); }
  [[nodiscard]] std::size_t local(std::int64_t g) const { return static_cast<std::size_t>(g % b); }
  [[nodiscard]] std::int64_t global(mr::pe p, std::size_t l) const {
    return (P - 1 - p.rank()) * b + static_cast<std::int64_t>(l);
  }
  [[nodiscard]] std::int64_t size() const { return n; }
};

// PE p's k-th global index.
std::int64_t index_of(int p, int k, std::int64_t n) {
  return static_cast<std::int64_t>(mix(static_cast<std::uint64_t>(p) * 1'000'003 + k) %
                                   static_cast<std::uint64_t>(n));
}

template <class D>
int check(const char* name, const D& d, int sends) {
  int failures = 0;
  const mr::pe me{int{g_me}};
  const std::size_t mine = mr::local_size(d, me);
  std::vector<std::int64_t> want(mine, 0);
  for (int p = 0; p < g_pes; ++p)
    for (int k = 0; k < sends; ++k) {
      const std::int64_t g = index_of(p, k, d.size());
      if (d.owner(g) == me) ++want[d.local(g)];
    }

  // An actor whose messages are the local indices.
  std::vector<std::int64_t> got(mine, 0);
  bool outside = false;
  mr::actor counter{mr::mailbox<std::int64_t>([&](std::int64_t l) {
    if (l < 0 || static_cast<std::size_t>(l) >= got.size())
      outside = true;
    else
      ++got[static_cast<std::size_t>(l)];
  })};
  for (int k = 0; k < sends; ++k) counter.send(d, index_of(g_me, k, d.size()));
  counter.done();
  counter.wait();
  EXPECT(!outside && got == want, "%s: local-index messages differ from the recount", name);

  // A selector: at<double> messages from the main flow, each also forwarded by its handler to
  // the owner of the next index as a local index (a send by distribution from a handler).
  std::vector<double> sums(mine, 0.0);
  std::vector<std::int64_t> forwarded(mine, 0);
  auto add = [&sums, &d](const mr::at<double>& m, mr::pe, auto& self) {
    sums[m.index] += m.value;
    const std::int64_t g = d.global(mr::pe(int{g_me}), m.index);
    self.template send<1>(d, (g + 1) % d.size());
  };
  auto count = [&forwarded](std::int64_t l) { ++forwarded[static_cast<std::size_t>(l)]; };
  mr::selector sel{mr::mailbox<mr::at<double>>(add), mr::mailbox<std::int64_t>(count)};
  for (int k = 0; k < sends; ++k) {
    const std::int64_t g = index_of(g_me, k, d.size());
    sel.template send<0>(d, g, 0.5 * static_cast<double>(g % 7));
  }
  sel.template done<0>();
  sel.wait();
  std::vector<double> want_sums(mine, 0.0);
  std::vector<std::int64_t> want_forwarded(mine, 0);
  for (int p = 0; p < g_pes; ++p)
    for (int k = 0; k < sends; ++k) {
      const std::int64_t g = index_of(p, k, d.size());
      if (d.owner(g) == me) want_sums[d.local(g)] += 0.5 * static_cast<double>(g % 7);
      const std::int64_t next = (g + 1) % d.size();
      if (d.owner(next) == me) ++want_forwarded[d.local(next)];
    }
  EXPECT(sums == want_sums, "%s: at<double> sums differ from the recount", name);
  EXPECT(forwarded == want_forwarded, "%s: sends from handlers differ from the recount", name);

  // Lambda messages by global index, called on the owner with the local index (from the main
  // flow: closure(local); from a handler, passing the selector on: closure(local, from, self)).
  std::vector<std::int64_t> called(mine, 0), relayed(mine, 0);
  const mr::symmetric<std::int64_t*> called_here(called.data()), relayed_here(relayed.data());
  mr::selector lam{mr::lambdas{}, mr::lambdas{}};
  for (int k = 0; k < sends; ++k)
    lam.template send<0>(d, index_of(g_me, k, d.size()), [=](std::size_t l, mr::pe, auto& self) {
      (*called_here)[l] += 1;
      const std::int64_t g = d.global(mr::this_pe(), l);
      self.template send<1>(d, (g + 1) % d.size(), [=](std::size_t m) { (*relayed_here)[m] += 1; });
    });
  lam.template done<0>();
  lam.wait();
  EXPECT(called == want, "%s: lambda messages by global index differ from the recount", name);
  EXPECT(relayed == want_forwarded, "%s: lambdas sent from lambdas differ from the recount", name);

  // A distributed array: every PE adds 1 at each of its indices (atomics), then each PE puts
  // g * 3 at the indices it owns in a second array, which all PEs read back with get and gather.
  mr::distributed<std::int64_t, D> counts(d), values(d);
  mr::barrier();
  for (int k = 0; k < sends; ++k) counts.add(index_of(g_me, k, d.size()), 1);
  mr::barrier();
  const std::span<std::int64_t> local = counts.local();
  EXPECT(local.size() == mine && std::vector<std::int64_t>(local.begin(), local.end()) == want,
         "%s: atomic adds differ from the recount", name);
  for (std::int64_t g = g_me; g < d.size(); g += g_pes) values.put(g, g * 3);
  mr::barrier();
  std::vector<std::int64_t> asked, out;
  for (int k = 0; k < sends; ++k) asked.push_back(index_of(g_me + 1, k, d.size()));
  out.assign(asked.size(), -1);
  mr::gather(values, std::span<const std::int64_t>(asked), std::span<std::int64_t>(out));
  for (std::size_t k = 0; k < asked.size(); ++k) {
    EXPECT(out[k] == asked[k] * 3, "%s: gather of %lld gave %lld", name,
           static_cast<long long>(asked[k]), static_cast<long long>(out[k]));
    if (k < 16)
      EXPECT(values.get(asked[k]) == asked[k] * 3, "%s: get of %lld", name,
             static_cast<long long>(asked[k]));
  }
  mr::barrier();
  symmetric_free(values);
  symmetric_free(counts);
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  return mailroom_test::run_main([&] {
    mr::runtime rt(argc, argv);
    const int sends = argc > 1 ? std::atoi(argv[1]) : 2000;
    const std::int64_t n = 1000 + g_pes;  // not a multiple of P: parts differ in size
    int failures = 0;
    failures += check("cyclic", mr::cyclic(n), sends);
    failures += check("block", mr::block(n), sends);
    failures += check("block_cyclic", mr::block_cyclic(n, 7), sends);
    failures += check("reversed_block", reversed_block{n, (n + g_pes - 1) / g_pes, g_pes}, sends);
    return mailroom_test::verdict(failures);
  });
}
