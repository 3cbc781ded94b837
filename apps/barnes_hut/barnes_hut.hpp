// SPDX-License-Identifier: MIT
// Barnes-Hut: steps of an n-body simulation (G = 1, Plummer softening) with octrees, the bodies
// sorted along a Morton curve so that each PE holds a compact segment of space and builds the
// octree of its own bodies: the P trees together, in PE order, are the distributed tree (a forest
// of curve segments). A body's acceleration is the sum, in tree order 0..P-1, of the walks of
// every tree. One header for the variants (each in its own file) and the code they all share, so
// that every tree is built and walked with the same arithmetic in the same order everywhere.
#pragma once

#include <mailroom/mailroom.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace mailroom::apps::barnes_hut {

struct vec3 {
  double x = 0, y = 0, z = 0;
  /// Adds o (how every variant sums the trees' parts, from 0, in tree order).
  vec3& operator+=(const vec3& o) {
    x += o.x;
    y += o.y;
    z += o.z;
    return *this;
  }
};

/// A body as a walk reads it (a leaf's bodies): position and mass.
struct body {
  double x, y, z, m;
};

/// One body's state, which the sort moves between PEs.
struct particle {
  double x, y, z, vx, vy, vz;
  std::int64_t id;    ///< its index in the input, 0..n-1
  std::uint64_t key;  ///< its Morton key in this step's bounding cube
};

/// A cell of a PE's octree. Indices are local to the PE that owns the tree (its part of the
/// cells' and bodies' global arrays): a walk of tree q reads cell l at global index q 2^k + l
/// (pow2_blocks).
struct cell {
  double x, y, z;      ///< centre of mass
  double mass;         ///< of its bodies
  double open2;        ///< (size / theta + |centre of mass - centre|)^2: closer bodies open it
  std::int32_t first;  ///< leaf: its first body; else its first child (the children are adjacent)
  std::int32_t count;  ///< leaf: its bodies; else its children (at most 8)
  std::int32_t leaf;   ///< 1: a leaf
  std::int32_t level;  ///< its depth in the octree of the whole bounding cube (0: the cube)
};

/// The parameters every variant runs with.
struct problem {
  std::int64_t n = 0;      ///< bodies in total
  double theta = 0.5;      ///< opening angle
  double eps = 0.01;       ///< Plummer softening length
  double dt = 0.01;        ///< time step
  std::int64_t steps = 1;  ///< steps per run
  [[nodiscard]] double mass() const { return 1.0 / static_cast<double>(n); }
};

/// Leaves hold up to this many bodies (more only at the deepest level, bodies of equal keys).
constexpr std::int64_t k_leaf_bodies = 8;
/// Bits per dimension of a Morton key: a key of 63 bits, the octree at most this deep.
constexpr int k_key_levels = 21;

/// A PE's octree: its cells (the root at 0, breadth first: the top levels come first) and its
/// bodies in curve order (a leaf's bodies are adjacent).
struct tree {
  std::vector<cell> cells;
  std::vector<body> bodies;
};

/// This PE's part of the simulation.
struct state {
  std::vector<particle> particles;     ///< this PE's bodies (in curve order after a step's sort)
  std::vector<vec3> acc;               ///< their accelerations at the last step
  std::vector<vec3> at;                ///< their positions when those were computed
  tree own;                            ///< the octree of this PE's bodies, this step
  std::vector<std::int64_t> cells_of;  ///< every PE's cell count this step (0: no tree)
};

/// Softened gravity of mass m at offset (dx, dy, dz) (d2 its square length), added to a.
inline void interact(vec3& a, double dx, double dy, double dz, double d2, double m, double eps2) {
  const double inv = 1.0 / std::sqrt(d2 + eps2);
  const double f = m * inv * inv * inv;
  a.x += f * dx;
  a.y += f * dy;
  a.z += f * dz;
}

/// The acceleration at p from one tree, whose cell l is cell_at(l) and body l body_at(l): a
/// depth-first walk, children in order, a cell far enough (outside its opening radius) as a
/// point mass, a leaf too close body by body but for body `self` (-1: none). Every variant walks
/// with this function, so a tree's contribution is the same bits wherever it is computed.
template <class CellAt, class BodyAt>
vec3 walk(CellAt&& cell_at, BodyAt&& body_at, std::int64_t cells, const vec3& p, std::int64_t self,
          double eps2) {
  vec3 a;
  if (cells == 0) return a;
  // Depth at most k_key_levels + 1 below the root, each level leaving at most 7 siblings.
  std::array<std::int32_t, 8 * (k_key_levels + 2)> stack;
  std::size_t top = 0;
  stack[top++] = 0;
  while (top > 0) {
    const cell c = cell_at(stack[--top]);
    const double dx = c.x - p.x, dy = c.y - p.y, dz = c.z - p.z;
    const double d2 = dx * dx + dy * dy + dz * dz;
    if (d2 >= c.open2) {
      interact(a, dx, dy, dz, d2, c.mass, eps2);
    } else if (c.leaf != 0) {
      for (std::int32_t l = c.first; l < c.first + c.count; ++l) {
        if (l == self) continue;
        const body b = body_at(l);
        const double bx = b.x - p.x, by = b.y - p.y, bz = b.z - p.z;
        interact(a, bx, by, bz, bx * bx + by * by + bz * bz, b.m, eps2);
      }
    } else {
      for (std::int32_t k = c.count - 1; k >= 0; --k) stack[top++] = c.first + k;
    }
  }
  return a;
}

/// The walk of this PE's own tree (its vectors) at p.
inline vec3 walk_own(const tree& t, const vec3& p, std::int64_t self, double eps2) {
  return walk([&t](std::int32_t l) { return t.cells[static_cast<std::size_t>(l)]; },
              [&t](std::int32_t l) { return t.bodies[static_cast<std::size_t>(l)]; },
              std::ssize(t.cells), p, self, eps2);
}

/// Collective, what every step starts with: drifts this PE's bodies half a step, sorts all
/// bodies along the Morton curve of their bounding cube (a sample sort: this PE then holds a
/// contiguous range of the curve), builds the octree of this PE's bodies into st.own and
/// gathers every PE's cell count into st.cells_of.
void begin_step(const problem& pb, state& st);
/// What every step ends with: kicks the bodies by st.acc (over dt) and drifts them half a step
/// (leapfrog, drift-kick-drift); st.at keeps where st.acc was computed.
void end_step(const problem& pb, state& st);

/// The global variants' distribution: PE p's part is global indices [p 2^k, (p + 1) 2^k), so
/// that a walk finds an element's owner and place with a shift and a mask, not block's divisions
/// (a walk reads a cell or a body every few nanoseconds).
class pow2_blocks {
 public:
  /// Parts of 2^log_room elements on each of `pes` PEs.
  pow2_blocks(int pes, int log_room) : pes_(pes), log_(log_room) {}
  [[nodiscard]] pe owner(std::int64_t g) const noexcept { return pe(g >> log_); }
  [[nodiscard]] std::size_t local(std::int64_t g) const noexcept {
    return static_cast<std::size_t>(g & ((std::int64_t{1} << log_) - 1));
  }
  [[nodiscard]] place locate(std::int64_t g) const noexcept { return {owner(g), local(g)}; }
  [[nodiscard]] std::int64_t global(pe p, std::size_t l) const noexcept {
    return std::int64_t{p.rank()} << log_ | static_cast<std::int64_t>(l);
  }
  [[nodiscard]] std::int64_t size() const noexcept { return std::int64_t{pes_} << log_; }
  [[nodiscard]] std::size_t local_size(pe) const noexcept { return std::size_t{1} << log_; }
  /// Indices from g on that g's owner holds consecutively: the rest of its part.
  [[nodiscard]] std::int64_t contiguous(std::int64_t g) const noexcept {
    return (std::int64_t{1} << log_) - static_cast<std::int64_t>(local(g));
  }
  /// The first global index of PE q's part.
  [[nodiscard]] std::int64_t first(int q) const noexcept { return std::int64_t{q} << log_; }

 private:
  int pes_, log_;
};

/// The global arrays the global variants walk: cells and bodies, PE p's part holding its tree.
class views {
 public:
  /// Collective: arrays with room for `cells` cells and `bodies` bodies per PE.
  views(const global_view_options& options, std::int64_t cells, std::int64_t bodies);
  views(const views&) = delete;
  views& operator=(const views&) = delete;
  /// Collective: gives the arrays' storage back.
  ~views();
  /// Collective: copies this PE's tree into its parts (reallocating both arrays, larger, when
  /// some PE's tree does not fit), then syncs: every PE's tree is visible, no stale page cached.
  void publish(const state& st);
  [[nodiscard]] const global_array<cell, pow2_blocks>& cells() const { return *cells_; }
  [[nodiscard]] const global_array<body, pow2_blocks>& bodies() const { return *bodies_; }

 private:
  void allocate();
  void release();
  global_view_options options_;
  int log_cells_, log_bodies_;  // each PE's room: 2^log elements
  std::optional<global_array<cell, pow2_blocks>> cells_;
  std::optional<global_array<body, pow2_blocks>> bodies_;
};

// Every variant runs pb.steps steps from st (this PE's bodies) and leaves st.particles, st.acc
// and st.at as they are after the last step. Collective: called on every PE.
void global(const problem& pb, state& st, views& v);  // every tree walked through the view
/// The options of global-nocache's views: every access to another PE's cell or body one-sided.
global_view_options nocache_options();
void global_nocache(const problem& pb, state& st, views& v);  // the same over nocache_options()
void selector(const problem& pb, state& st);  // remote walks shipped to their trees' owners
/// The floor: the same steps with the walk of this PE's own tree only (no remote cell or body).
void local(const problem& pb, state& st);

}  // namespace mailroom::apps::barnes_hut
