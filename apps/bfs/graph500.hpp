// SPDX-License-Identifier: MIT
// Graph500's BFS benchmark by its rules (specification 2.0, "Search"): the Kronecker generator
// (or Erdős–Rényi's, as Active Pebbles used), kernel 1's construction, 64 search keys, kernel 2
// in several variants, the specification's validation of every search and its statistics (TEPS
// per search, their harmonic mean). Vertices are distributed cyclically (mailroom::cyclic). One
// header for the pieces, each in its own file.
#pragma once

#include <mailroom/mailroom.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace mailroom::apps::bfs {

/// The input graph's shape.
struct graph_spec {
  int scale = 18;                 ///< 2^scale vertices
  std::int64_t edge_factor = 16;  ///< edge_factor x 2^scale edge tuples
  bool kronecker = true;          ///< Kronecker (Graph500) or Erdős–Rényi (uniform endpoints)
  std::uint64_t seed = 1;
  [[nodiscard]] std::int64_t vertices() const { return std::int64_t{1} << scale; }
  [[nodiscard]] std::int64_t edges() const { return edge_factor * vertices(); }
};

/// One edge tuple of the generated list (start, end), as global vertex numbers.
struct edge {
  std::int64_t u, v;
};

/// This PE's share of the edge list: tuples [rank x M / P, (rank + 1) x M / P) of the one list
/// that the seed defines, whatever P is (each tuple is a function of the seed and its number).
std::vector<edge> generate(const graph_spec& spec);

/// Kernel 1's output: the undirected graph without self-loops as adjacency lists of this PE's
/// vertices (cyclic: vertex v on PE v mod P at v / P), neighbours as global numbers; and the
/// input tuples, which the validation reads.
struct graph {
  graph_spec spec;
  cyclic dist;
  std::vector<edge> tuples;
  std::vector<std::int64_t> offsets;    ///< local vertex l's neighbours: [offsets[l], offsets[l+1])
  std::vector<std::int64_t> adjacency;  ///< neighbours' global numbers

  [[nodiscard]] std::int64_t vertices() const { return spec.vertices(); }
  [[nodiscard]] std::size_t local_vertices() const { return offsets.size() - 1; }
  /// The most vertices any PE holds: the size of the symmetric arrays of per-vertex values.
  [[nodiscard]] std::size_t most_local() const {
    return static_cast<std::size_t>((vertices() + num_pes() - 1) / num_pes());
  }
  [[nodiscard]] std::span<const std::int64_t> neighbours(std::size_t l) const {
    return {adjacency.data() + offsets[l], adjacency.data() + offsets[l + 1]};
  }
};

/// Kernel 1 (collective): every tuple to both endpoints' owners, then adjacency lists.
graph construct(const graph_spec& spec, std::vector<edge> tuples);

/// Graph500's search keys (collective): `count` distinct vertices drawn at random from those with
/// a neighbour other than themselves; fewer when the graph has fewer such vertices.
std::vector<std::int64_t> search_keys(const graph& g, int count, std::uint64_t seed);

// Kernel 2: one search from `root` (collective). `parent` holds this PE's vertices (cyclic),
// -1 on entry; on return parent[l] is the BFS parent's global number (the root's is the root)
// or -1 where the search did not reach.
void naive(const graph& g, std::int64_t root, symmetric_array<std::int64_t> parent);
void conveyor(const graph& g, std::int64_t root, symmetric_array<std::int64_t> parent);
void selector(const graph& g, std::int64_t root, symmetric_array<std::int64_t> parent);
void lambda(const graph& g, std::int64_t root, symmetric_array<std::int64_t> parent);
void async(const graph& g, std::int64_t root, symmetric_array<std::int64_t> parent);

/// The level-synchronous variants' frame: the root's owner holds the first frontier (local
/// indices); `expand(frontier, next)` (collective) sets the parents of the frontier's unreached
/// neighbours and leaves this PE's newly reached vertices in `next`; until no PE has a frontier.
template <class F>
void by_levels(const graph& g, std::int64_t root, symmetric_array<std::int64_t> parent,
               F&& expand) {
  std::vector<std::size_t> frontier, next;
  if (g.dist.owner(root) == this_pe()) {
    parent[g.dist.local(root)] = root;
    frontier.push_back(g.dist.local(root));
  }
  while (all_reduce(static_cast<std::int64_t>(frontier.size()), max<>{}) > 0) {
    next.clear();
    expand(frontier, next);
    frontier.swap(next);
  }
}

/// The floor: the whole graph on every PE (gathered once, untimed), searched serially with a
/// queue; its parent array covers all vertices.
struct whole_graph {
  std::vector<std::int64_t> offsets, adjacency;
};
whole_graph gather_whole(const graph& g);
void local(const whole_graph& w, std::int64_t root, std::vector<std::int64_t>& parent);

/// The specification's checks of one search, in its order; `none` when all pass.
enum class check : std::uint8_t {
  none = 0,
  root,          ///< the root is its own parent, and no other vertex is
  parent_range,  ///< every parent is -1 or a vertex
  tree,          ///< the parents form a tree: every reached vertex's chain ends at the root
  edge_levels,   ///< every input edge joins levels that differ by at most one
  component,     ///< no input edge joins a reached vertex and an unreached one
  tree_edges,    ///< every tree edge (v, parent[v]) is an input edge
};
const char* describe(check c);

/// What validating one search found (collective; the same on every PE).
struct validation {
  check failed = check::none;  ///< the first check that failed (in the order above)
  std::int64_t edges = 0;      ///< input tuples with both ends reached (Graph500's nedge)
  std::int64_t reached = 0;    ///< vertices in the tree
  int depth = 0;               ///< the deepest level
};

/// Validates `parent` (this PE's vertices) as a BFS tree of g from root, by the specification:
/// levels computed from the parents, then every input tuple checked against them. The PE that
/// finds a failure names the vertex or edge on stderr (when `say`).
class validator {
 public:
  explicit validator(const graph& g);
  ~validator();
  validator(const validator&) = delete;
  validator& operator=(const validator&) = delete;
  validation operator()(std::int64_t root, std::span<const std::int64_t> parent, bool say = true);

 private:
  struct node {
    std::int64_t level, parent;  // level: >= 0, or unreached, pending or broken (validate.cpp)
  };
  // The vertices at the ends of this PE's input tuples ("ghosts", each once, by owner), asked
  // of their owners once: each search then reads all of them with one all-to-all.
  struct ghosts {
    std::vector<int> counts, displs;  // by owner
    std::vector<std::uint32_t> slot;  // tuple k's ends u, v: slots 2k and 2k + 1
    std::vector<std::size_t> serve;   // the local indices other PEs ask of this PE, by PE
    std::vector<int> serve_counts, serve_displs;
    std::vector<node> reply;  // (reused by every search)
  };
  std::vector<node> read_ghosts();

  const graph& g_;
  symmetric_array<node> nodes_;
  ghosts ghosts_;
};

/// Graph500's statistics of one series (its reference code's: quartiles by interpolation, the
/// sample standard deviation, and for rates the harmonic mean and its standard error, after
/// Norris, 1940).
struct summary {
  double min = 0, first_quartile = 0, median = 0, third_quartile = 0, max = 0, mean = 0, stddev = 0,
         harmonic_mean = 0, harmonic_stddev = 0;
};
summary summarise(std::vector<double> x);

}  // namespace mailroom::apps::bfs
