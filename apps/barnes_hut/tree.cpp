// SPDX-License-Identifier: MIT
// Barnes-Hut, what every variant shares: the step's frame (the drift, the sort of all bodies along
// the Morton curve, the octree of this PE's bodies, the kick) and the global arrays that publish
// every PE's tree to the global variants.
#include "barnes_hut/barnes_hut.hpp"

#include <algorithm>
#include <bit>
#include <limits>
#include <tuple>

namespace mailroom::apps::barnes_hut {

namespace {

// Samples per PE for the sort's splitters: more balance the PEs' counts better (regular
// sampling bounds a PE's share by about n/P (1 + P/k)), at the price of an all_gather of k P.
constexpr std::size_t k_samples = 64;

// A body's place on the curve: its key, ties (equal keys) broken by the body's index.
struct rank_key {
  std::uint64_t key;
  std::int64_t id;
  friend bool operator<(const rank_key& a, const rank_key& b) {
    return std::tie(a.key, a.id) < std::tie(b.key, b.id);
  }
};
rank_key rank_of(const particle& p) { return {p.key, p.id}; }

// The bounding cube of every body: its lowest corner and its side.
struct cube {
  double x = 0, y = 0, z = 0, side = 1;
};

// Collective: the cube of every PE's bodies (an all_reduce of the lowest and highest coordinate).
cube bounding_cube(std::span<const particle> ps) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  std::array<double, 3> lo{inf, inf, inf}, hi{-inf, -inf, -inf};
  for (const particle& p : ps) {
    lo = {std::min(lo[0], p.x), std::min(lo[1], p.y), std::min(lo[2], p.z)};
    hi = {std::max(hi[0], p.x), std::max(hi[1], p.y), std::max(hi[2], p.z)};
  }
  all_reduce(std::span<double>(lo), min<>{});
  all_reduce(std::span<double>(hi), max<>{});
  const double side = std::max({hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]});
  return {lo[0], lo[1], lo[2], side > 0 ? side : 1.0};
}

// The bits of v spread to every third bit (bit i to bit 3i).
std::uint64_t spread(std::uint64_t v) {
  v &= 0x1fffff;
  v = (v | v << 32) & 0x1f00000000ffffULL;
  v = (v | v << 16) & 0x1f0000ff0000ffULL;
  v = (v | v << 8) & 0x100f00f00f00f00fULL;
  v = (v | v << 4) & 0x10c30c30c30c30c3ULL;
  v = (v | v << 2) & 0x1249249249249249ULL;
  return v;
}
// The inverse: every third bit, gathered.
std::uint64_t gather_bits(std::uint64_t v) {
  v &= 0x1249249249249249ULL;
  v = (v | v >> 2) & 0x10c30c30c30c30c3ULL;
  v = (v | v >> 4) & 0x100f00f00f00f00fULL;
  v = (v | v >> 8) & 0x1f0000ff0000ffULL;
  v = (v | v >> 16) & 0x1f00000000ffffULL;
  v = (v | v >> 32) & 0x1fffff;
  return v;
}

// A coordinate's cell of 2^21 along one side of the cube (the far face in the last).
std::uint64_t grid(double v, double lo, double side) {
  constexpr double cells = 1 << k_key_levels;
  const double c = std::floor((v - lo) / side * cells);
  return static_cast<std::uint64_t>(std::clamp(c, 0.0, cells - 1));
}

// Collective: sorts every PE's particles along the curve; this PE gets a contiguous range of it.
// Each PE sorts its own, k_samples of them regularly spaced from every PE pick P - 1 splitters,
// and one all_to_all_v sends each body to the PE of its range.
void sort_along_curve(std::vector<particle>& ps, const cube& c) {
  for (particle& p : ps)
    p.key = spread(grid(p.x, c.x, c.side)) << 2 | spread(grid(p.y, c.y, c.side)) << 1 |
            spread(grid(p.z, c.z, c.side));
  const auto by_curve = [](const particle& a, const particle& b) {
    return rank_of(a) < rank_of(b);
  };
  std::sort(ps.begin(), ps.end(), by_curve);
  const int P = num_pes();
  if (P == 1) return;
  std::vector<rank_key> samples(k_samples, rank_key{std::numeric_limits<std::uint64_t>::max(),
                                                    std::numeric_limits<std::int64_t>::max()});
  if (!ps.empty())
    for (std::size_t k = 0; k < k_samples; ++k) samples[k] = rank_of(ps[k * ps.size() / k_samples]);
  std::vector<rank_key> all = all_gather(std::span<const rank_key>(samples));
  std::sort(all.begin(), all.end());
  std::vector<rank_key> splitters;  // PE p's range starts at splitters[p - 1]
  for (int p = 1; p < P; ++p) splitters.push_back(all[static_cast<std::size_t>(p) * k_samples]);
  std::vector<int> counts(static_cast<std::size_t>(P), 0);
  for (const particle& p : ps)
    ++counts[static_cast<std::size_t>(
        std::upper_bound(splitters.begin(), splitters.end(), rank_of(p)) - splitters.begin())];
  ps = all_to_all_v(std::span<const particle>(ps), std::span<const int>(counts), {});
  std::sort(ps.begin(), ps.end(), by_curve);  // P sorted runs
}

// The octree of ps (sorted along the curve), breadth first. The root is the smallest cell of the
// curve that holds them all (their keys' common prefix); a cell of more than k_leaf_bodies is
// split into its non-empty octants, which are adjacent runs of ps.
void build(const problem& pb, const cube& c, std::span<const particle> ps, tree& t) {
  const double m = pb.mass();
  t.bodies.resize(ps.size());
  for (std::size_t i = 0; i < ps.size(); ++i) t.bodies[i] = {ps[i].x, ps[i].y, ps[i].z, m};
  t.cells.clear();
  if (ps.empty()) return;
  const std::uint64_t differ = ps.front().key ^ ps.back().key;
  const int root_level =
      differ == 0 ? k_key_levels : k_key_levels - 1 - (std::bit_width(differ) - 1) / 3;
  struct range {
    std::int32_t lo, hi;
  };
  std::vector<range> ranges;  // each cell's bodies while the tree grows
  const auto add = [&](std::int32_t lo, std::int32_t hi, int level) {
    t.cells.push_back(cell{0, 0, 0, 0, 0, lo, hi - lo, 0, level});
    ranges.push_back({lo, hi});
  };
  add(0, static_cast<std::int32_t>(ps.size()), root_level);
  for (std::size_t i = 0; i < t.cells.size(); ++i) {
    const range r = ranges[i];
    const int level = t.cells[i].level;
    if (r.hi - r.lo <= k_leaf_bodies || level == k_key_levels) {
      t.cells[i].leaf = 1;
      continue;
    }
    const int shift = 3 * (k_key_levels - level - 1);
    const auto first = static_cast<std::int32_t>(t.cells.size());
    std::int32_t children = 0;
    for (std::int32_t lo = r.lo; lo < r.hi; ++children) {
      const std::uint64_t octant = ps[static_cast<std::size_t>(lo)].key >> shift & 7;
      std::int32_t hi = lo + 1;
      while (hi < r.hi && (ps[static_cast<std::size_t>(hi)].key >> shift & 7) == octant) ++hi;
      add(lo, hi, level + 1);
      lo = hi;
    }
    t.cells[i].first = first;
    t.cells[i].count = children;
  }
  // Masses and centres of mass from the leaves up (children come after their parents).
  for (std::size_t i = t.cells.size(); i-- > 0;) {
    cell& x = t.cells[i];
    double mass = 0, mx = 0, my = 0, mz = 0;
    const auto weigh = [&](double w, double px, double py, double pz) {
      mass += w;
      mx += w * px;
      my += w * py;
      mz += w * pz;
    };
    for (std::int32_t k = x.first; k < x.first + x.count; ++k) {
      const auto at = static_cast<std::size_t>(k);
      if (x.leaf != 0)
        weigh(t.bodies[at].m, t.bodies[at].x, t.bodies[at].y, t.bodies[at].z);
      else
        weigh(t.cells[at].mass, t.cells[at].x, t.cells[at].y, t.cells[at].z);
    }
    x.mass = mass;
    x.x = mx / mass;
    x.y = my / mass;
    x.z = mz / mass;
    // Barnes' modified criterion: opened when closer than size / theta plus the centre of mass's
    // offset from the cell's centre, so that a body inside the cell always opens it (theta <= 1:
    // inside, it is at most sqrt(3)/2 size from the centre) and lopsided cells open earlier.
    // The cell's centre from its place on the curve: its bodies' common key prefix.
    const std::uint64_t prefix =
        ps[static_cast<std::size_t>(ranges[i].lo)].key >> 3 * (k_key_levels - x.level);
    const double size = std::ldexp(c.side, -x.level);
    const double cx = c.x + (static_cast<double>(gather_bits(prefix >> 2)) + 0.5) * size;
    const double cy = c.y + (static_cast<double>(gather_bits(prefix >> 1)) + 0.5) * size;
    const double cz = c.z + (static_cast<double>(gather_bits(prefix)) + 0.5) * size;
    const double off =
        std::sqrt((x.x - cx) * (x.x - cx) + (x.y - cy) * (x.y - cy) + (x.z - cz) * (x.z - cz));
    const double r = size / pb.theta + off;  // (theta 0: infinite, every cell opened)
    x.open2 = r * r;
  }
}

// The smallest k with 2^k >= n (a global array's room per PE).
int log_room(std::int64_t n) {
  return std::bit_width(static_cast<std::uint64_t>(std::max<std::int64_t>(n, 1) - 1));
}

}  // namespace

void begin_step(const problem& pb, state& st) {
  const double half = 0.5 * pb.dt;
  for (particle& p : st.particles) {
    p.x += half * p.vx;
    p.y += half * p.vy;
    p.z += half * p.vz;
  }
  const cube c = bounding_cube(st.particles);
  sort_along_curve(st.particles, c);
  build(pb, c, st.particles, st.own);
  st.cells_of = all_gather(static_cast<std::int64_t>(st.own.cells.size()));
  st.acc.assign(st.particles.size(), vec3{});
  st.at.resize(st.particles.size());
  for (std::size_t i = 0; i < st.particles.size(); ++i)
    st.at[i] = {st.particles[i].x, st.particles[i].y, st.particles[i].z};
}

void end_step(const problem& pb, state& st) {
  const double half = 0.5 * pb.dt;
  for (std::size_t i = 0; i < st.particles.size(); ++i) {
    particle& p = st.particles[i];
    p.vx += pb.dt * st.acc[i].x;
    p.vy += pb.dt * st.acc[i].y;
    p.vz += pb.dt * st.acc[i].z;
    p.x += half * p.vx;
    p.y += half * p.vy;
    p.z += half * p.vz;
  }
}

views::views(const global_view_options& options, std::int64_t cells, std::int64_t bodies)
    : options_(options), log_cells_(log_room(cells)), log_bodies_(log_room(bodies)) {
  allocate();
}

views::~views() { release(); }

void views::allocate() {
  cells_.emplace(pow2_blocks(num_pes(), log_cells_), options_);
  bodies_.emplace(pow2_blocks(num_pes(), log_bodies_), options_);
}

// Collective: each array synced, then its storage freed.
void views::release() {
  if (!cells_) return;
  symmetric_free(*cells_);
  symmetric_free(*bodies_);
  cells_.reset();
  bodies_.reset();
}

void views::publish(const state& st) {
  const std::int64_t cells = *std::max_element(st.cells_of.begin(), st.cells_of.end());
  const std::int64_t bodies = all_reduce(std::ssize(st.own.bodies), max<>{});
  if (cells > std::int64_t{1} << log_cells_ || bodies > std::int64_t{1} << log_bodies_) {
    // (Rare: the rooms are powers of two, with a quarter to spare at the start.)
    release();
    log_cells_ = std::max(log_cells_, log_room(cells));
    log_bodies_ = std::max(log_bodies_, log_room(bodies));
    allocate();
  }
  std::copy(st.own.cells.begin(), st.own.cells.end(), cells_->local().begin());
  std::copy(st.own.bodies.begin(), st.own.bodies.end(), bodies_->local().begin());
  sync();
}

}  // namespace mailroom::apps::barnes_hut
