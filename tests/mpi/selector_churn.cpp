// SPDX-License-Identifier: MIT
// Creating and destroying many selectors keeps memory flat: a program that builds a selector per
// phase (or per iteration of a solver) runs for ever. Each selector here has two mailboxes and
// carries one message through both; after a warm-up, the resident set may grow by no more than
// a page per 8,192 selectors (half a byte each), and every message arrives once. A selector that
// lives through the whole run, and a few alive together, check that references to selectors
// (selector::ref(), what lambda messages carry) still find theirs as the table of live ones is
// rebuilt.
// Usage: selector_churn [selectors] [slack KiB: what the resident set may grow by besides; 64]
// (Across emulated hosts MPI's TCP buffers grow as the run goes: there the test gives 256.)
#include <mailroom/mailroom.hpp>

#include "mpi_check.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>

// AddressSanitizer keeps freed memory in quarantine (256 MiB by default) before reusing it, so
// the resident set grows with every allocation freed: the bound means nothing there.
#if defined(__SANITIZE_ADDRESS__)
#define CHURN_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CHURN_ASAN 1
#endif
#endif
#ifndef CHURN_ASAN
#define CHURN_ASAN 0
#endif

namespace mr = mailroom;
using mailroom_test::g_me;
using mailroom_test::g_pes;

namespace {

std::int64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::int64_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * 4096;
}

template <class Sel>
int check_ref(const Sel& s) {
  return &*s.ref() == &s ? 0 : 1;
}

std::int64_t one_selector(std::int64_t i, int& failures) {
  std::int64_t got = 0;
  mr::selector s{mr::mailbox<std::int64_t>([](std::int64_t v, mr::pe, auto& self) {
                   self.template send<1>(mr::pe((mr::this_pe().rank() + 1) % mr::num_pes()), v + 1);
                 }),
                 mr::mailbox<std::int64_t>([&got, i](std::int64_t v) { got += v == i + 1; })};
  failures += check_ref(s);
  s.send<0>(mr::pe((g_me + 1) % g_pes), i);
  s.done<0>();
  s.wait();
  return got;
}

}  // namespace

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 1000000;
  const std::int64_t slack = (argc > 2 ? std::atoll(argv[2]) : 64) * 1024;
  const std::int64_t warm = n / 10;
  int failures = 0;
  std::int64_t got = 0;
  mr::selector outer{mr::mailbox<int>([](int) {})};  // alive through the whole run
  for (std::int64_t i = 0; i < warm; ++i) got += one_selector(i, failures);
  const std::int64_t before = resident_bytes();
  for (std::int64_t i = warm; i < n; ++i) {
    if (i % 1000 == 0) {  // a few alive together
      mr::selector a{mr::mailbox<int>([](int) {})};
      mr::selector b{mr::mailbox<int>([](int) {})};
      failures += check_ref(a) + check_ref(b) + check_ref(outer);
      got += one_selector(i, failures);
      failures += check_ref(a) + check_ref(b) + check_ref(outer);
    } else {
      got += one_selector(i, failures);
    }
  }
  failures += check_ref(outer);
  outer.done<0>();
  outer.wait();
  const std::int64_t grown = resident_bytes() - before;
  EXPECT(failures == 0, "selector::ref() found another selector");
  EXPECT(got == n, "%lld messages arrived right, expected %lld", static_cast<long long>(got),
         static_cast<long long>(n));
  const std::int64_t allowed = (n - warm) / 8192 * 4096 + slack;
  EXPECT(CHURN_ASAN || grown <= allowed,
         "the resident set grew by %lld bytes over %lld selectors (%.2f each; "
         "allowed %lld)",
         static_cast<long long>(grown), static_cast<long long>(n - warm),
         static_cast<double>(grown) / static_cast<double>(n - warm),
         static_cast<long long>(allowed));
  if (g_me == 0 && CHURN_ASAN)
    std::printf("(AddressSanitizer's quarantine holds freed memory: the bound is not checked)\n");
  if (g_me == 0)
    std::printf("%lld selectors: resident set grew by %lld bytes after the first %lld\n",
                static_cast<long long>(n), static_cast<long long>(grown),
                static_cast<long long>(warm));
  return mailroom_test::verdict(failures);
}
