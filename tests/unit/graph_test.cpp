// SPDX-License-Identifier: MIT
// The mailbox dependency graph: strongly connected components in topological order, which of
// them are cyclic, their predecessors, the entry mailboxes, and validation of the edges.
#include <mailroom/termination.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <utility>
#include <vector>

namespace {

using mailroom::graph;
using mailroom::termination::analyse;
using mailroom::termination::plan;
using members = std::vector<int>;

std::vector<members> members_of(const plan& p) {
  std::vector<members> out;
  for (const auto& c : p.components) out.push_back(c.members);
  return out;
}

std::vector<int> entries_of(const plan& p) {
  std::vector<int> out;
  for (std::size_t m = 0; m < p.entry.size(); ++m)
    if (p.entry[m]) out.push_back(static_cast<int>(m));
  return out;
}

TEST(GraphChain, LinksEachMailboxToTheNext) {
  EXPECT_TRUE(graph::chain(0).edges.empty());
  EXPECT_TRUE(graph::chain(1).edges.empty());
  const graph g = graph::chain(4);
  EXPECT_EQ(g.edges, (std::vector<std::pair<int, int>>{{0, 1}, {1, 2}, {2, 3}}));
  EXPECT_TRUE(g.entries.empty());
}

TEST(GraphAnalyse, ChainGivesOneAcyclicComponentPerMailboxInOrder) {
  const int n = 5;
  const plan p = analyse(graph::chain(n), n);
  ASSERT_EQ(p.components.size(), static_cast<std::size_t>(n));
  for (int c = 0; c < n; ++c) {
    const auto& comp = p.components[static_cast<std::size_t>(c)];
    EXPECT_EQ(comp.members, members{c});
    EXPECT_FALSE(comp.cyclic);
    EXPECT_EQ(comp.predecessors, c == 0 ? members{} : members{c - 1});
    EXPECT_EQ(p.component_of[static_cast<std::size_t>(c)], c);
  }
  EXPECT_EQ(entries_of(p), members{0});
}

TEST(GraphAnalyse, SingleMailboxWithoutEdgesIsAnEntry) {
  const plan p = analyse(graph{}, 1);
  ASSERT_EQ(p.components.size(), 1u);
  EXPECT_FALSE(p.components[0].cyclic);
  EXPECT_EQ(entries_of(p), members{0});
}

TEST(GraphAnalyse, NoMailboxesNoComponents) {
  const plan p = analyse(graph{}, 0);
  EXPECT_TRUE(p.components.empty());
  EXPECT_TRUE(p.entry.empty());
}

TEST(GraphAnalyse, UnconnectedMailboxesAreAllEntries) {
  const plan p = analyse(graph{}, 3);
  EXPECT_EQ(p.components.size(), 3u);
  EXPECT_EQ(entries_of(p), (members{0, 1, 2}));
}

TEST(GraphAnalyse, SelfLoopIsACyclicSingleMemberComponent) {
  const plan p = analyse(graph{{0, 1}, {1, 1}}, 2);
  ASSERT_EQ(members_of(p), (std::vector<members>{{0}, {1}}));
  EXPECT_FALSE(p.components[0].cyclic);
  EXPECT_TRUE(p.components[1].cyclic);
  EXPECT_EQ(p.components[1].predecessors, members{0});
  EXPECT_EQ(entries_of(p), members{0});
}

TEST(GraphAnalyse, SelfLoopAloneIsItsOwnEntry) {
  const plan p = analyse(graph{{0, 0}}, 1);
  ASSERT_EQ(p.components.size(), 1u);
  EXPECT_TRUE(p.components[0].cyclic);
  EXPECT_EQ(entries_of(p), members{0});
}

TEST(GraphAnalyse, TwoCycleFedByAnEntry) {
  const plan p = analyse(graph{{0, 1}, {1, 2}, {2, 1}}, 3);
  ASSERT_EQ(members_of(p), (std::vector<members>{{0}, {1, 2}}));
  EXPECT_FALSE(p.components[0].cyclic);
  EXPECT_TRUE(p.components[1].cyclic);
  EXPECT_EQ(p.components[1].predecessors, members{0});
  EXPECT_EQ(p.component_of, (members{0, 1, 1}));
  EXPECT_EQ(entries_of(p), members{0});
}

TEST(GraphAnalyse, PureCycleEntersAtItsLowestMember) {
  const plan p = analyse(graph{{1, 0}, {0, 1}}, 2);
  ASSERT_EQ(members_of(p), (std::vector<members>{{0, 1}}));
  EXPECT_TRUE(p.components[0].cyclic);
  EXPECT_TRUE(p.components[0].predecessors.empty());
  EXPECT_EQ(entries_of(p), members{0});

  // The same with a higher-numbered cycle beside an unrelated mailbox.
  const plan q = analyse(graph{{3, 2}, {2, 3}}, 4);
  EXPECT_EQ(entries_of(q), (members{0, 1, 2}));
}

TEST(GraphAnalyse, ExplicitEntriesOverrideTheDefault) {
  graph g = graph::chain(3);
  g.entries = {0, 2};
  EXPECT_EQ(entries_of(analyse(g, 3)), (members{0, 2}));
  // Even a mailbox that would be an entry by default is not one unless listed.
  const plan p = analyse(graph({{0, 1}}, {1}), 2);
  EXPECT_EQ(entries_of(p), members{1});
}

TEST(GraphAnalyse, DiamondIsInTopologicalOrder) {
  const plan p = analyse(graph{{0, 1}, {0, 2}, {1, 3}, {2, 3}}, 4);
  ASSERT_EQ(p.components.size(), 4u);
  const auto& at = p.component_of;
  EXPECT_EQ(at[0], 0);
  EXPECT_EQ(at[3], 3);
  EXPECT_LT(at[0], at[1]);
  EXPECT_LT(at[0], at[2]);
  EXPECT_LT(at[1], at[3]);
  EXPECT_LT(at[2], at[3]);
  for (const auto& c : p.components) EXPECT_FALSE(c.cyclic);
  auto preds = p.components[3].predecessors;
  std::sort(preds.begin(), preds.end());
  EXPECT_EQ(preds, (members{at[1] < at[2] ? at[1] : at[2], at[1] < at[2] ? at[2] : at[1]}));
  EXPECT_EQ(entries_of(p), members{0});
}

TEST(GraphAnalyse, EdgesListedBackwardsStillGiveTopologicalOrder) {
  // 2 -> 1 -> 0: mailbox 2 must come first although it has the highest number.
  const plan p = analyse(graph{{1, 0}, {2, 1}}, 3);
  EXPECT_EQ(members_of(p), (std::vector<members>{{2}, {1}, {0}}));
  EXPECT_EQ(entries_of(p), members{2});
}

TEST(GraphAnalyse, DuplicateEdgesGiveOnePredecessor) {
  const plan p = analyse(graph{{0, 1}, {0, 1}}, 2);
  EXPECT_EQ(p.components[1].predecessors, members{0});
}

// On random graphs, checks every property the termination protocol relies on against a
// brute-force reachability matrix.
TEST(GraphAnalyse, RandomGraphsSatisfyEveryInvariant) {
  std::mt19937 rng(2024);
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 9);
    const int edges = static_cast<int>(rng() % static_cast<unsigned>(2 * n + 1));
    graph g;
    for (int e = 0; e < edges; ++e)
      g.edges.emplace_back(static_cast<int>(rng() % static_cast<unsigned>(n)),
                           static_cast<int>(rng() % static_cast<unsigned>(n)));
    const plan p = analyse(g, n);
    SCOPED_TRACE(::testing::Message() << "trial " << trial << ", " << n << " mailboxes");

    const auto un = static_cast<std::size_t>(n);
    std::vector<std::vector<bool>> reach(un, std::vector<bool>(un, false));  // by >= 1 edge
    for (auto [x, y] : g.edges)
      reach[static_cast<std::size_t>(x)][static_cast<std::size_t>(y)] = true;
    for (std::size_t k = 0; k < un; ++k)
      for (std::size_t i = 0; i < un; ++i)
        for (std::size_t j = 0; j < un; ++j)
          if (reach[i][k] && reach[k][j]) reach[i][j] = true;

    // The components partition the mailboxes, members sorted, component_of agrees.
    ASSERT_EQ(p.component_of.size(), un);
    std::vector<int> seen(un, 0);
    for (std::size_t c = 0; c < p.components.size(); ++c) {
      const auto& comp = p.components[c];
      ASSERT_FALSE(comp.members.empty());
      EXPECT_TRUE(std::is_sorted(comp.members.begin(), comp.members.end()));
      for (int m : comp.members) {
        ++seen[static_cast<std::size_t>(m)];
        EXPECT_EQ(p.component_of[static_cast<std::size_t>(m)], static_cast<int>(c));
      }
    }
    EXPECT_EQ(seen, std::vector<int>(un, 1));

    // Same component exactly when mutually reachable; cyclic exactly when a member reaches
    // itself.
    for (std::size_t i = 0; i < un; ++i) {
      for (std::size_t j = 0; j < un; ++j) {
        const bool same = p.component_of[i] == p.component_of[j];
        EXPECT_EQ(same, i == j || (reach[i][j] && reach[j][i])) << i << " " << j;
      }
      EXPECT_EQ(p.components[static_cast<std::size_t>(p.component_of[i])].cyclic, reach[i][i]);
    }

    // Topological order, and predecessors are exactly the other components with an edge in.
    std::vector<std::set<int>> preds(p.components.size());
    for (auto [x, y] : g.edges) {
      const int cx = p.component_of[static_cast<std::size_t>(x)];
      const int cy = p.component_of[static_cast<std::size_t>(y)];
      EXPECT_LE(cx, cy);
      if (cx != cy) preds[static_cast<std::size_t>(cy)].insert(cx);
    }
    for (std::size_t c = 0; c < p.components.size(); ++c) {
      const auto& listed = p.components[c].predecessors;
      EXPECT_EQ(std::set<int>(listed.begin(), listed.end()), preds[c]);
      EXPECT_EQ(listed.size(), preds[c].size()) << "a predecessor is listed twice";
    }

    // Default entries: no incoming edge from another mailbox; a component that nothing feeds
    // and that has no such mailbox enters at its lowest member; every other mailbox is fed.
    ASSERT_EQ(p.entry.size(), un);
    for (std::size_t m = 0; m < un; ++m) {
      const bool fed = std::any_of(g.edges.begin(), g.edges.end(), [&](auto e) {
        return e.second == static_cast<int>(m) && e.first != e.second;
      });
      const auto& comp = p.components[static_cast<std::size_t>(p.component_of[m])];
      const bool lowest_of_unfed_cycle =
          comp.predecessors.empty() && comp.members.front() == static_cast<int>(m) &&
          std::none_of(comp.members.begin(), comp.members.end(), [&](int o) {
            return std::none_of(g.edges.begin(), g.edges.end(),
                                [&](auto e) { return e.second == o && e.first != o; });
          });
      EXPECT_EQ(p.entry[m], !fed || lowest_of_unfed_cycle) << "mailbox " << m;
    }
    // Every component that nothing feeds has an entry, or it could never close.
    for (const auto& comp : p.components) {
      if (!comp.predecessors.empty()) continue;
      EXPECT_TRUE(std::any_of(comp.members.begin(), comp.members.end(),
                              [&](int m) { return p.entry[static_cast<std::size_t>(m)]; }));
    }
  }
}

TEST(GraphAnalyseDeathTest, EdgeOutOfRangeIsFatal) {
  EXPECT_EXIT(analyse(graph{{0, 1}, {1, 3}}, 3), testing::ExitedWithCode(1),
              "graph edge \\{1, 3\\} names a mailbox out of range \\[0, 3\\)");
  EXPECT_EXIT(analyse(graph{{-1, 0}}, 2), testing::ExitedWithCode(1),
              "graph edge \\{-1, 0\\} names a mailbox out of range \\[0, 2\\)");
}

TEST(GraphAnalyseDeathTest, EntryOutOfRangeIsFatal) {
  EXPECT_EXIT(analyse(graph({{0, 1}}, {2}), 2), testing::ExitedWithCode(1),
              "graph entry 2 is out of range \\[0, 2\\)");
}

}  // namespace
