// SPDX-License-Identifier: MIT
// Graph500's input: the Kronecker generator (initiator A, B, C = 0.57, 0.19, 0.19, D the rest)
// with its vertex permutation, or Erdős–Rényi's uniform endpoints; kernel 1's construction; the
// search keys; the serial floor's whole graph; the statistics of the report.
#include "bfs/graph500.hpp"
#include "common/driver.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <deque>

namespace mailroom::apps::bfs {

namespace {

constexpr double k_a = 0.57, k_b = 0.19, k_c = 0.19;  // the specification's initiator

// splitmix64's finalizer: every tuple's draws are a function of the seed and the tuple's number,
// so the list is the same for any P (as the reference generator's is).
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
double uniform(std::uint64_t key, std::uint64_t n) {
  return static_cast<double>(mix(key ^ mix(n)) >> 11) * 0x1p-53;
}

// The vertex permutation: a bijection of [0, 2^scale) drawn from the seed (affine maps modulo
// 2^scale around a bit reversal and an xor-shift, each invertible), as the reference code
// scrambles its vertex numbers instead of storing a permutation.
class scramble {
 public:
  explicit scramble(const graph_spec& s)
      : scale_(s.scale),
        mask_((std::uint64_t{1} << s.scale) - 1),
        m1_(mix(s.seed * 4 + 1) | 1),
        a1_(mix(s.seed * 4 + 2)),
        m2_(mix(s.seed * 4 + 3) | 1),
        a2_(mix(s.seed * 4 + 4)) {}
  [[nodiscard]] std::int64_t operator()(std::uint64_t v) const {
    v = (v * m1_ + a1_) & mask_;
    v = reverse(v) >> (64 - scale_);
    v ^= v >> std::max(1, scale_ / 2);
    return static_cast<std::int64_t>((v * m2_ + a2_) & mask_);
  }

 private:
  static std::uint64_t reverse(std::uint64_t v) {
    v = ((v >> 1) & 0x5555555555555555ULL) | ((v & 0x5555555555555555ULL) << 1);
    v = ((v >> 2) & 0x3333333333333333ULL) | ((v & 0x3333333333333333ULL) << 2);
    v = ((v >> 4) & 0x0f0f0f0f0f0f0f0fULL) | ((v & 0x0f0f0f0f0f0f0f0fULL) << 4);
    return __builtin_bswap64(v);
  }
  int scale_;
  std::uint64_t mask_, m1_, a1_, m2_, a2_;
};

// Tuples [first, last) of the list.
std::vector<edge> tuples(const graph_spec& s, std::int64_t first, std::int64_t last) {
  std::vector<edge> out;
  out.reserve(static_cast<std::size_t>(last - first));
  const std::uint64_t key = mix(s.seed ^ 0x6772617068353030ULL);  // "graph500"
  const auto draws = static_cast<std::uint64_t>(2 * s.scale + 2);
  const scramble perm(s);
  const std::uint64_t mask = (std::uint64_t{1} << s.scale) - 1;
  for (std::int64_t e = first; e < last; ++e) {
    const std::uint64_t base = static_cast<std::uint64_t>(e) * draws;
    std::uint64_t i = 0, j = 0;
    if (s.kronecker) {
      // Each bit: the row's half with probability A + B (top) or C + D, then the column's with
      // the initiator's conditional probability in that half (the reference's recursion).
      for (int bit = 0; bit < s.scale; ++bit) {
        const bool ib = uniform(key, base + 2 * bit) > k_a + k_b;
        const double top = ib ? k_c / (1.0 - (k_a + k_b)) : k_a / (k_a + k_b);
        const bool jb = uniform(key, base + 2 * bit + 1) > top;
        i |= std::uint64_t{ib} << bit;
        j |= std::uint64_t{jb} << bit;
      }
    } else {
      i = mix(key ^ mix(base)) & mask;
      j = mix(key ^ mix(base + 1)) & mask;
    }
    out.push_back({perm(i), perm(j)});
  }
  return out;
}

// Adjacency lists of n rows: edges(f) calls f(row, neighbour) for every directed edge, the same
// ones in the same order each time (a counting pass, then a filling one).
template <class Edges>
void adjacency_lists(std::size_t n, Edges edges, std::vector<std::int64_t>& offsets,
                     std::vector<std::int64_t>& adjacency) {
  offsets.assign(n + 1, 0);
  edges([&](std::size_t row, std::int64_t) { ++offsets[row + 1]; });
  for (std::size_t r = 0; r < n; ++r) offsets[r + 1] += offsets[r];
  adjacency.resize(static_cast<std::size_t>(offsets[n]));
  std::vector<std::int64_t> fill(offsets.begin(), offsets.end() - 1);
  edges([&](std::size_t row, std::int64_t v) {
    adjacency[static_cast<std::size_t>(fill[row]++)] = v;
  });
}

}  // namespace

std::vector<edge> generate(const graph_spec& spec) {
  const std::int64_t m = spec.edges(), P = num_pes(), me = this_pe().rank();
  return tuples(spec, m * me / P, m * (me + 1) / P);
}

graph construct(const graph_spec& spec, std::vector<edge> input) {
  graph g{spec, cyclic(spec.vertices()), std::move(input), {}, {}};
  // Both directions of every tuple but self-loops, to their start's owner.
  std::vector<edge> both;
  both.reserve(2 * g.tuples.size());
  for (const edge& e : g.tuples)
    if (e.u != e.v) {
      both.push_back(e);
      both.push_back({e.v, e.u});
    }
  const std::vector<edge> mine = to_owners(
      std::span<const edge>(both), [&g](const edge& e) { return g.dist.owner(e.u).rank(); });
  both = {};
  adjacency_lists(
      local_size(g.dist, this_pe()),
      [&](auto&& f) {
        for (const edge& e : mine) f(g.dist.local(e.u), e.v);
      },
      g.offsets, g.adjacency);
  return g;
}

std::vector<std::int64_t> search_keys(const graph& g, int count, std::uint64_t seed) {
  std::vector<std::int64_t> keys;
  const std::uint64_t mask = static_cast<std::uint64_t>(g.vertices()) - 1;
  const std::uint64_t key = mix(seed ^ 0x6b657973ULL);  // "keys"
  const pe me = this_pe();
  // Draws until `count` distinct vertices with a neighbour are found, or (a graph with fewer)
  // until 8 x its vertices have been drawn.
  for (std::uint64_t k = 0; std::ssize(keys) < count && k < 8 * (mask + 1) + 64; ++k) {
    const auto v = static_cast<std::int64_t>(mix(key + k) & mask);
    if (std::find(keys.begin(), keys.end(), v) != keys.end()) continue;
    std::int64_t has = 0;
    if (g.dist.owner(v) == me) has = g.neighbours(g.dist.local(v)).empty() ? 0 : 1;
    if (all_reduce(has, max<>{}) != 0) keys.push_back(v);
  }
  return keys;
}

whole_graph gather_whole(const graph& g) {
  const std::vector<edge> all = tuples(g.spec, 0, g.spec.edges());
  whole_graph w;
  adjacency_lists(
      static_cast<std::size_t>(g.vertices()),
      [&](auto&& f) {
        for (const edge& e : all)
          if (e.u != e.v) {
            f(static_cast<std::size_t>(e.u), e.v);
            f(static_cast<std::size_t>(e.v), e.u);
          }
      },
      w.offsets, w.adjacency);
  return w;
}

void local(const whole_graph& w, std::int64_t root, std::vector<std::int64_t>& parent) {
  parent.assign(w.offsets.size() - 1, -1);
  std::vector<std::int64_t> queue;
  queue.reserve(parent.size());
  parent[static_cast<std::size_t>(root)] = root;
  queue.push_back(root);
  for (std::size_t head = 0; head < queue.size(); ++head) {
    const std::int64_t u = queue[head];
    for (std::int64_t k = w.offsets[static_cast<std::size_t>(u)];
         k < w.offsets[static_cast<std::size_t>(u) + 1]; ++k) {
      const std::int64_t v = w.adjacency[static_cast<std::size_t>(k)];
      if (parent[static_cast<std::size_t>(v)] < 0) {
        parent[static_cast<std::size_t>(v)] = u;
        queue.push_back(v);
      }
    }
  }
}

summary summarise(std::vector<double> x) {
  summary s;
  if (x.empty()) return s;
  std::sort(x.begin(), x.end());
  const auto n = static_cast<double>(x.size());
  // Quartiles at (n + 1) / 4 and 3 (n + 1) / 4, interpolated between neighbours (1-based).
  const auto quantile = [&](double t) {
    const double lo = std::clamp(std::floor(t), 1.0, n), hi = std::clamp(std::ceil(t), 1.0, n);
    const double a = x[static_cast<std::size_t>(lo) - 1], b = x[static_cast<std::size_t>(hi) - 1];
    return lo == hi ? a : (hi - t) * a + (t - lo) * b;
  };
  s.min = x.front();
  s.max = x.back();
  s.first_quartile = quantile((n + 1) / 4);
  s.median = quantile((n + 1) / 2);
  s.third_quartile = quantile(3 * (n + 1) / 4);
  double sum = 0, inverse = 0;
  for (const double v : x) {
    sum += v;
    inverse += v != 0 ? 1 / v : 0;
  }
  s.mean = sum / n;
  s.harmonic_mean = inverse > 0 ? n / inverse : 0;
  double dev = 0, inv_dev = 0;
  const double inv_mean = inverse / n;
  for (const double v : x) {
    dev += (v - s.mean) * (v - s.mean);
    const double d = (v != 0 ? 1 / v : 0) - inv_mean;
    inv_dev += d * d;
  }
  if (x.size() > 1) {
    s.stddev = std::sqrt(dev / (n - 1));
    // The standard error of the harmonic mean (Norris), as Graph500's reference reports it.
    s.harmonic_stddev = std::sqrt(inv_dev) / (n - 1) * s.harmonic_mean * s.harmonic_mean;
  }
  return s;
}

}  // namespace mailroom::apps::bfs
