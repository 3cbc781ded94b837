// SPDX-License-Identifier: MIT
// Selectors over teams: the rows and columns of a grid of PEs, run as the phases of a 2-D
// algorithm, both alive at once; a cycle that terminates among a team's members; a team of some
// PEs beside selectors of the whole job (whose ids must stay in step on every PE); teams split
// again and again (their ids taken again). Every count and sum is checked exactly.
#include "expect.hpp"

#include <mailroom/mailroom.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

namespace mr = mailroom;
using mailroom_test::g_me;
using mailroom_test::g_pes;

namespace {

std::int64_t value_of(int pe) { return 1000 + 7 * static_cast<std::int64_t>(pe); }

struct note {
  std::int64_t sender;  // world rank
  std::int64_t value;
};

// Every member sends `per` notes to every member of t (itself included) through mailbox 0, whose
// handler checks that `from` (a rank in t) is the sender, sums, and answers the sender through
// mailbox 1. Returns the failures.
int all_to_all_phase(const mr::team& t, int per, const char* name) {
  int failures = 0;
  std::int64_t got = 0, answers = 0, wrong_from = 0, wrong_answer = 0;
  mr::selector sel{t, mr::mailbox<note>([&](note n, mr::pe from, auto& self) {
                     if (t.world_pe(from.rank()).rank() != n.sender) ++wrong_from;
                     got += n.value;
                     self.template send<1>(from, std::int64_t{t.rank()});
                   }),
                   mr::mailbox<std::int64_t>([&](std::int64_t r, mr::pe from) {
                     if (r != from.rank()) ++wrong_answer;
                     ++answers;
                   })};
  for (int k = 0; k < per; ++k)
    for (int r = 0; r < t.size(); ++r) sel.send<0>(mr::pe(r), note{g_me, value_of(g_me)});
  sel.done<0>();
  sel.wait();
  std::int64_t want = 0;
  for (int r = 0; r < t.size(); ++r) want += per * value_of(t.world_pe(r).rank());
  EXPECT(got == want, "%s: sum %lld, want %lld", name, static_cast<long long>(got),
         static_cast<long long>(want));
  EXPECT(answers == std::int64_t{per} * t.size(), "%s: %lld answers, want %lld", name,
         static_cast<long long>(answers), static_cast<long long>(std::int64_t{per} * t.size()));
  EXPECT(wrong_from == 0 && wrong_answer == 0, "%s: %lld senders and %lld answers misnamed", name,
         static_cast<long long>(wrong_from), static_cast<long long>(wrong_answer));
  return failures;
}

int grid_phases() {
  int failures = 0;
  const int columns = std::max(1, static_cast<int>(std::sqrt(static_cast<double>(g_pes))));
  const auto grid = mr::split_grid(columns);
  failures += all_to_all_phase(grid.row, 50, "row phase");
  failures += all_to_all_phase(grid.column, 50, "column phase");
  return failures;
}

// A row selector and a column selector alive together, their sends interleaved; lambda
// messages on the column's, typed on the row's.
int rows_and_columns_at_once() {
  int failures = 0;
  const int columns = g_pes >= 4 ? 2 : 1;
  const auto grid = mr::split_grid(columns);
  std::int64_t row_sum = 0;
  // (Lambda messages capture no references: a handle to symmetric memory instead.)
  auto column_sum = mr::symmetric_array<std::int64_t>(1);
  column_sum[0] = 0;
  mr::barrier();
  mr::actor<std::int64_t> row(grid.row, [&](std::int64_t v) { row_sum += v; });
  mr::actor<> column(grid.column);
  const std::int64_t mine = value_of(g_me);
  for (int k = 0; k < 200; ++k) {
    row.send(mr::pe(k % grid.row.size()), mine);
    column.send(mr::pe(k % grid.column.size()), [=] { column_sum[0] += mine; });
  }
  row.done();
  column.done();
  mr::when_all(row.finished_future(), column.finished_future()).get();
  // Member r of a team of n receives 200 / n rounds from each member, plus one more from those
  // for which r < 200 % n.
  const auto want = [](const mr::team& t) {
    std::int64_t s = 0;
    const int n = t.size(), r = t.rank();
    for (int m = 0; m < n; ++m)
      s += (200 / n + (r < 200 % n ? 1 : 0)) * value_of(t.world_pe(m).rank());
    return s;
  };
  EXPECT(row_sum == want(grid.row), "row sum %lld, want %lld", static_cast<long long>(row_sum),
         static_cast<long long>(want(grid.row)));
  EXPECT(column_sum[0] == want(grid.column), "column sum %lld, want %lld",
         static_cast<long long>(column_sum[0]), static_cast<long long>(want(grid.column)));
  return failures;
}

// A token passed around a team's ring until its hops run out: a self-loop, closed by quiescence
// among the members only.
int cycle_in_team(const mr::team& t) {
  int failures = 0;
  std::int64_t handled = 0;
  constexpr std::int64_t k_hops = 25;
  mr::selector ring{t, mr::graph{{0, 0}},
                    mr::mailbox<std::int64_t>([&](std::int64_t left, mr::pe, auto& self) {
                      ++handled;
                      if (left > 0)
                        self.template send<0>(mr::pe((t.rank() + 1) % t.size()), left - 1);
                    })};
  for (int k = 0; k < 3; ++k) ring.send<0>(mr::pe((t.rank() + k) % t.size()), k_hops);
  ring.done<0>();
  ring.wait();
  const std::int64_t total = mr::all_reduce(handled, mr::plus<>{}, t);
  EXPECT(total == 3 * (k_hops + 1) * t.size(), "ring: %lld handled, want %lld",
         static_cast<long long>(total), static_cast<long long>(3 * (k_hops + 1) * t.size()));
  return failures;
}

// Cycles closed at once over a row, a column and the whole job (their termination protocols in
// flight together, started in different orders on different PEs).
int cycles_at_once() {
  int failures = 0;
  const auto grid = mr::split_grid(g_pes >= 4 ? 2 : 1);
  constexpr std::int64_t k_hops = 15;
  std::int64_t handled[3] = {0, 0, 0};
  const auto ring = [&](const mr::team* t, std::int64_t& count) {
    const int n = t != nullptr ? t->size() : int{g_pes};
    const int me = t != nullptr ? t->rank() : int{g_me};
    return mr::mailbox<std::int64_t>([&count, n, me](std::int64_t left, mr::pe, auto& self) {
      ++count;
      if (left > 0) self.template send<0>(mr::pe((me + 1) % n), left - 1);
    });
  };
  mr::selector row{grid.row, mr::graph{{0, 0}}, ring(&grid.row, handled[0])};
  mr::selector column{grid.column, mr::graph{{0, 0}}, ring(&grid.column, handled[1])};
  mr::selector job{mr::graph{{0, 0}}, ring(nullptr, handled[2])};
  row.send<0>(mr::pe(0), k_hops);
  column.send<0>(mr::pe(0), k_hops);
  job.send<0>(mr::pe(0), k_hops);
  // Done in a different order on odd and even PEs.
  if (g_me % 2 == 0) {
    row.done<0>();
    column.done<0>();
    job.done<0>();
  } else {
    job.done<0>();
    column.done<0>();
    row.done<0>();
  }
  mr::when_all(row.finished_future(), column.finished_future(), job.finished_future()).get();
  const std::int64_t rows = mr::all_reduce(handled[0], mr::plus<>{}, grid.row);
  const std::int64_t columns = mr::all_reduce(handled[1], mr::plus<>{}, grid.column);
  const std::int64_t all = mr::all_reduce(handled[2]);
  EXPECT(rows == grid.row.size() * (k_hops + 1), "row ring: %lld", static_cast<long long>(rows));
  EXPECT(columns == grid.column.size() * (k_hops + 1), "column ring: %lld",
         static_cast<long long>(columns));
  EXPECT(all == g_pes * (k_hops + 1), "job ring: %lld", static_cast<long long>(all));
  return failures;
}

// References to a selector over a team, captured by lambda messages, reach it on the member that
// runs them; a job selector's reference made after team selectors reaches the job's.
int references() {
  int failures = 0;
  const auto grid = mr::split_grid(g_pes >= 2 ? 2 : 1);
  auto got = mr::symmetric_array<std::int64_t>(2);
  got[0] = got[1] = 0;
  mr::barrier();
  {
    mr::selector row{grid.row, mr::lambdas{}, mr::lambdas{}};
    const auto ref = row.ref();
    const int n = grid.row.size(), me = grid.row.rank();
    for (int r = 0; r < n; ++r)
      row.send<0>(mr::pe(r), [=] {
        // Forwarded through the reference to mailbox 1 of the next member.
        ref->template send<1>(mr::pe((me + 1) % n), [=] { got[0] += 1; });
      });
    row.done<0>();
    row.wait();
  }
  mr::selector job{mr::lambdas{}, mr::lambdas{}};
  const auto job_ref = job.ref();
  const int next = (int{g_me} + 1) % g_pes;
  job.send<0>(mr::this_pe(),
              [=] { job_ref->template send<1>(mr::pe(next), [=] { got[1] += 1; }); });
  job.done<0>();
  job.wait();
  EXPECT(got[0] == grid.row.size(), "row: %lld forwarded, want %d", static_cast<long long>(got[0]),
         grid.row.size());
  EXPECT(got[1] == 1, "job: %lld", static_cast<long long>(got[1]));
  return failures;
}

// The even PEs run a selector over their team between two selectors of the whole job: the job's
// mailboxes keep the same ids on every PE, so the second one's messages reach it on all.
int team_beside_world() {
  int failures = 0;
  const mr::team even = mr::team::world().split(g_me % 2 == 0 ? 0 : -1);
  std::int64_t first = 0, second = 0;
  {
    mr::actor<std::int64_t> a([&](std::int64_t v) { first += v; });
    for (int p = 0; p < g_pes; ++p) a.send(mr::pe(p), 1);
    a.done();
    a.wait();
  }
  if (even.valid()) {
    failures += all_to_all_phase(even, 10, "even team");
    failures += cycle_in_team(even);
  }
  mr::actor<std::int64_t> b([&](std::int64_t v) { second += v; });
  for (int p = 0; p < g_pes; ++p) b.send(mr::pe((p + g_me) % g_pes), 2);
  b.done();
  b.wait();
  EXPECT(first == g_pes && second == 2 * g_pes, "job selectors: %lld and %lld",
         static_cast<long long>(first), static_cast<long long>(second));
  return failures;
}

// Teams split and dropped again and again take their ids again; the mailboxes over each must
// still meet only their own.
int teams_again_and_again() {
  int failures = 0;
  for (int round = 0; round < 6; ++round) {
    const int colour = (g_me + round) % std::min(int{g_pes}, 3);
    const mr::team t = mr::team::world().split(colour, -g_me);
    failures += all_to_all_phase(t, 5, "split again");
  }
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  return mailroom_test::run_main([&] {
    mr::runtime rt(argc, argv);
    int failures = 0;
    failures += grid_phases();
    failures += rows_and_columns_at_once();
    failures += cycle_in_team(mr::split_grid(g_pes >= 2 ? 2 : 1).row);
    failures += cycles_at_once();
    failures += references();
    failures += team_beside_world();
    failures += teams_again_and_again();
    return mailroom_test::verdict(failures);
  });
}
