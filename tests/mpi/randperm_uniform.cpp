// SPDX-License-Identifier: MIT
// Random permutation (apps/randperm): every variant, over thousands of seeds at tiny sizes, must
// return a permutation of 0..N-1, the same one as every other variant (a contested slot goes to
// the smaller value, so the result does not depend on timing), and the permutations must be
// uniform: chi-square over all 24 permutations of N = 4, and over the (position, value) table of
// N = 12. Thresholds are the chi-square quantiles at p = 1e-4, conservative for a test that must
// not flake.
#include "randperm/randperm.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <numeric>
#include <string>
#include <vector>

namespace mr = mailroom;
namespace rp = mailroom::apps::randperm;

namespace {

constexpr const char* k_variants[] = {"naive", "bsp", "conveyor", "selector", "lambda"};

// The whole permutation, on every PE: the PEs' parts concatenated in PE order.
std::vector<std::int64_t> run(const std::string& v, std::int64_t n_per_pe, std::uint64_t seed) {
  std::vector<std::int64_t> part;
  if (v == "naive") part = rp::naive(n_per_pe, seed);
  if (v == "bsp") part = rp::bsp(n_per_pe, seed);
  if (v == "conveyor") part = rp::conveyor(n_per_pe, seed);
  if (v == "selector") part = rp::selector(n_per_pe, seed);
  if (v == "lambda") part = rp::lambda(n_per_pe, seed);
  const int P = mr::num_pes();
  int mine = static_cast<int>(part.size());
  std::vector<int> sizes(P), at(P);
  MPI_Allgather(&mine, 1, MPI_INT, sizes.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::exclusive_scan(sizes.begin(), sizes.end(), at.begin(), 0);
  std::vector<std::int64_t> whole(static_cast<std::size_t>(at.back() + sizes.back()));
  MPI_Allgatherv(part.data(), mine, MPI_INT64_T, whole.data(), sizes.data(), at.data(), MPI_INT64_T,
                 MPI_COMM_WORLD);
  return whole;
}

bool is_permutation(std::vector<std::int64_t> p, std::int64_t n) {
  std::sort(p.begin(), p.end());
  std::vector<std::int64_t> want(static_cast<std::size_t>(n));
  std::iota(want.begin(), want.end(), 0);
  return p == want;
}

// Runs every variant on `seeds` seeds for N = n_per_pe * P; checks each result and hands the
// (common) permutation to `tally`. Returns the number of failures (the same on every PE).
template <class Tally>
int sweep(std::int64_t n_per_pe, std::uint64_t first_seed, int seeds, Tally&& tally) {
  const std::int64_t N = n_per_pe * mr::num_pes();
  int failures = 0;
  for (std::uint64_t seed = first_seed; seed < first_seed + seeds; ++seed) {
    std::vector<std::int64_t> first;
    for (const std::string v : k_variants) {
      const std::vector<std::int64_t> p = run(v, n_per_pe, seed);
      const bool ok = is_permutation(p, N) && (first.empty() || p == first);
      if (!ok && ++failures <= 5 && mr::this_pe().rank() == 0)
        std::printf("N = %lld, seed %llu: %s returned %s\n", static_cast<long long>(N),
                    static_cast<unsigned long long>(seed), v.c_str(),
                    is_permutation(p, N) ? "another permutation than naive" : "no permutation");
      if (first.empty()) first = p;
    }
    tally(first);
  }
  return failures;
}

int verdict(const char* what, double statistic, double limit) {
  const bool ok = statistic < limit;
  if (mr::this_pe().rank() == 0)
    std::printf("%-40s chi-square %8.2f (limit %.2f) %s\n", what, statistic, limit,
                ok ? "PASSED" : "FAILED");
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  const int P = mr::num_pes();
  const int seeds = argc > 1 ? std::atoi(argv[1]) : 4000;
  int failures = 0;

  if (4 % P == 0) {  // N = 4: each of the 24 permutations equally often
    std::map<std::vector<std::int64_t>, int> seen;
    failures += sweep(4 / P, 1, seeds, [&](const auto& p) { ++seen[p]; });
    const double expected = seeds / 24.0;
    double chi2 = (24.0 - static_cast<double>(seen.size())) * expected;  // permutations never seen
    for (const auto& [p, count] : seen) chi2 += (count - expected) * (count - expected) / expected;
    failures += verdict("N = 4, all 24 permutations (23 dof)", chi2, 57.07);
  }
  if (12 % P == 0) {  // N = 12: each value equally often at each position
    constexpr int N = 12;
    std::vector<int> table(N * N, 0);
    failures += sweep(N / P, 100'001, seeds, [&](const auto& p) {
      for (int i = 0; i < N; ++i) ++table[i * N + p[static_cast<std::size_t>(i)]];
    });
    // The rows and columns of a permutation's table each sum to one, so Pearson's statistic is
    // N/(N-1) times a chi-square with (N-1)^2 degrees of freedom.
    const double expected = static_cast<double>(seeds) / N;
    double chi2 = 0;
    for (const int count : table) chi2 += (count - expected) * (count - expected) / expected;
    failures += verdict("N = 12, (position, value) table (121 dof)", chi2 * (N - 1) / N, 187.56);
  }
  if (mr::this_pe().rank() == 0) std::printf("%s\n", failures == 0 ? "PASSED" : "FAILED");
  return failures == 0 ? 0 : 1;
}
