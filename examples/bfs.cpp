// SPDX-License-Identifier: MIT
// Asynchronous breadth-first search with message reductions: the tutorial's search (a mailbox
// that sends to itself), its vertices addressed by a distribution and its visits combined at the
// sender by min: a vertex's several visits waiting to leave one PE travel as one, the shortest.
// Usage: bfs [N] (vertices, default 200000); checked against a search on one PE.
#include <mailroom/mailroom.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <limits>
#include <vector>

namespace mr = mailroom;

namespace {
constexpr std::int64_t unseen = std::numeric_limits<std::int64_t>::max();

// The implicit graph: vertex v's neighbours.
std::int64_t neighbour(std::int64_t v, int j, std::int64_t n) {
  return j == 0 ? (2 * v + 1) % n : j == 1 ? (2 * v + 2) % n : (v + 7) % n;
}
}  // namespace

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 200000;
  const mr::cyclic vertices(n);
  const mr::pe me = mr::this_pe();
  std::vector<std::int64_t> distance(mr::local_size(vertices, me), unseen);

  // A visit is at<int64_t>{distance, local index}, sent by global index; visits of one vertex
  // that wait at the sender together combine into the shortest (reduce(min)).
  mr::selector bfs{
      mr::graph{{0, 0}},
      mr::mailbox<mr::at<std::int64_t>>([&](const mr::at<std::int64_t>& m, mr::pe, auto& self) {
        if (m.value >= distance[m.index]) return;
        distance[m.index] = m.value;
        const std::int64_t v = vertices.global(me, m.index);
        for (int j = 0; j < 3; ++j)
          self.template send<0>(vertices, neighbour(v, j, n), m.value + 1);
      }).reduce(mr::min<>{})};
  const mr::statistics before = mr::stats();
  if (me.rank() == 0) bfs.send<0>(vertices, 0, 0);  // the source, vertex 0, at distance 0
  bfs.done<0>();
  bfs.wait();
  mr::statistics traffic = mr::stats();
  traffic -= before;

  // The same search on one PE, to check.
  std::vector<std::int64_t> want(static_cast<std::size_t>(n), unseen);
  std::deque<std::int64_t> frontier{0};
  want[0] = 0;
  while (!frontier.empty()) {
    const std::int64_t v = frontier.front();
    frontier.pop_front();
    for (int j = 0; j < 3; ++j)
      if (const std::int64_t w = neighbour(v, j, n); want[w] == unseen) {
        want[w] = want[v] + 1;
        frontier.push_back(w);
      }
  }
  std::int64_t wrong = 0;
  for (std::size_t l = 0; l < distance.size(); ++l)
    wrong += distance[l] != want[static_cast<std::size_t>(vertices.global(me, l))];
  wrong = mr::all_reduce(wrong);
  const std::int64_t sent = mr::all_reduce(traffic.messages_sent);
  const std::int64_t combined = mr::all_reduce(traffic.messages_combined);
  if (me.rank() == 0)
    std::printf(
        "bfs: %lld vertices, %lld with a wrong distance; %lld visits sent, %lld more "
        "combined at the sender\n",
        static_cast<long long>(n), static_cast<long long>(wrong), static_cast<long long>(sent),
        static_cast<long long>(combined));
  return wrong == 0 ? 0 : 1;
}
