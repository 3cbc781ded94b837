// SPDX-License-Identifier: MIT
// Teams (README): a grid of PEs split into row and column teams; a selector over a row, whose
// members send to every member of it by rank in the row; a reduction over each column. Every PE
// sends x = 1 + its rank to each member of its row, so each receives the sum over its row, and
// the column totals add up to the whole job's.
// Usage: scripts/mpirun.sh -n 4 build/examples/teams [columns]
#include <mailroom/mailroom.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace mr = mailroom;

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  const int P = mr::num_pes(), me = mr::this_pe().rank();
  const int columns = argc > 1 ? std::atoi(argv[1]) : (P % 2 == 0 ? 2 : 1);
  const std::int64_t x = 1 + me;
  std::int64_t sum = 0;
  {
    auto grid = mr::split_grid(columns);  // this PE's row and column teams
    mr::actor<std::int64_t> row(grid.row, [&](std::int64_t v) { sum += v; });
    for (int r = 0; r < grid.row.size(); ++r) row.send(mr::pe(r), x);  // member r of the row
    row.done();
    row.wait();
    auto column_total = mr::all_reduce(sum, mr::plus<>{}, grid.column);
    // Each row's sum reaches each of its `columns` members: the job's total, `columns` times.
    const std::int64_t job = static_cast<std::int64_t>(P) * (P + 1) / 2;
    const std::int64_t all = mr::all_reduce(grid.column.rank() == 0 ? column_total : 0);
    const bool ok = all == job * columns;
    if (me == 0)
      std::printf("teams: %d PEs in rows of %d: column totals add up to %lld (want %lld): %s\n", P,
                  columns, static_cast<long long>(all), static_cast<long long>(job * columns),
                  ok ? "PASSED" : "FAILED");
    if (!ok) return 1;
  }
  return 0;
}
