// SPDX-License-Identifier: MIT
// Deterministic inputs for the Bale kernels and for users' tests: random graphs and matrices,
// permutations, and Kronecker products of stars whose triangle counts are known in closed form.
// Every generator is collective and depends only on its arguments and the seed, not on the
// number of PEs, unless stated.
#pragma once

#include "mailroom/sparse_matrix.hpp"

#include <cstdint>
#include <vector>

namespace mailroom {

/// Which entries erdos_renyi() draws: all off-diagonal ones (full), or an undirected graph's
/// edges once each, strictly below (lower) or above (upper) the diagonal.
enum class triangle { full, lower, upper };

/// Erdős–Rényi G(n, p) adjacency matrix (pattern), p = nnz_per_row / n (at most 1), by geometric
/// gap skipping (each row from its own stream, a function of seed and row only). full: every
/// off-diagonal entry independently, p (n-1) ≈ nnz_per_row entries per row on average;
/// lower/upper: an undirected graph, each edge {i, j} once, strictly below/above the diagonal:
/// p (n-1) / 2 ≈ nnz_per_row / 2 entries per row on average, so that every vertex has about
/// nnz_per_row neighbours. (lower and upper of one seed are different graphs, not transposes.)
sparse_matrix erdos_renyi(std::int64_t n, double nnz_per_row, std::uint64_t seed,
                          triangle shape = triangle::full);

/// The Kronecker product of the star graphs K_{1,m} for m in `stars` (Bale's "kron" graphs),
/// as a strictly lower-triangular adjacency matrix (pattern) of an undirected graph with
/// n = prod(m + 1) vertices. As in Bale's default triangle input, each star has a self-loop at
/// its centre (vertex 0; leaves are 1..m), since a product of loop-free stars has no triangles.
/// Vertex v of the product is the tuple of its digits in the mixed radix (m + 1), the first star
/// most significant; u ~ v when every digit pair is adjacent in its star. The only loop of the
/// product (vertex 0, all centres) is dropped. Each m >= 0; an empty list is the 1-vertex graph.
sparse_matrix kronecker_stars(const std::vector<std::int64_t>& stars);
/// The number of triangles of kronecker_stars(stars), in closed form:
/// (prod(3m + 1) - 3 prod(m + 1) + 2) / 6. (A star with a centre loop has trace(A^3) = 3m + 1;
/// traces of cubes multiply under the Kronecker product; removing the product's one loop takes
/// 1 + 3 (prod(m + 1) - 1) closed 3-walks away; trace / 6 counts triangles of a loopless graph.)
std::int64_t kronecker_stars_triangles(const std::vector<std::int64_t>& stars);

/// A uniformly random permutation of 0..n-1, distributed cyclically: element i on PE i % P at
/// local index i / P. Independent of P. (0..n-1 ordered by 64-bit random keys, a function of seed
/// and value: a distributed sort, O(n / P) memory per PE.)
std::vector<std::int64_t> random_permutation(std::int64_t n, std::uint64_t seed);

/// The toposort input: a random n x n unit upper-triangular matrix (ones on the diagonal,
/// about nnz_per_row entries per row) with its rows and columns randomly permuted. As in Bale:
/// the diagonal plus erdos_renyi-like upper entries with p = 2 (nnz_per_row - 1) / (n - 1), so a
/// row holds 1 + p (n - 1) / 2 ≈ nnz_per_row entries on average; then permute() by two
/// random_permutation()s whose seeds derive from `seed`.
sparse_matrix permuted_upper_triangular(std::int64_t n, double nnz_per_row, std::uint64_t seed);

/// Collective: B with B[row_perm[i]][col_perm[j]] = A[i][j]; both permutations distributed
/// cyclically like random_permutation's. A reference for tests (simple, not fast): checks that
/// both are permutations, then moves every nonzero in one all-to-all exchange (O(nnz / P) memory
/// per PE, so it also serves the benchmarks' checkers at full size).
sparse_matrix permute(const sparse_matrix& a, const std::vector<std::int64_t>& row_perm,
                      const std::vector<std::int64_t>& col_perm);
/// Collective: the transpose. A reference for tests (simple, not fast; one all-to-all exchange).
sparse_matrix transpose(const sparse_matrix& a);

/// Serial references (no MPI, any PE alone, small sizes): the whole matrix or permutation that
/// gather() of the collective function of the same name gives, whatever the number of PEs. The
/// generators share their per-row code with the collective ones; permute and transpose take
/// whole permutations.
namespace reference {
/// The whole of mailroom::erdos_renyi(n, nnz_per_row, seed, shape).
sparse_matrix::serial erdos_renyi(std::int64_t n, double nnz_per_row, std::uint64_t seed,
                                  triangle shape = triangle::full);
/// The whole of mailroom::kronecker_stars(stars).
sparse_matrix::serial kronecker_stars(const std::vector<std::int64_t>& stars);
/// The whole of mailroom::random_permutation(n, seed): element i at index i.
std::vector<std::int64_t> random_permutation(std::int64_t n, std::uint64_t seed);
/// The whole of mailroom::permuted_upper_triangular(n, nnz_per_row, seed).
sparse_matrix::serial permuted_upper_triangular(std::int64_t n, double nnz_per_row,
                                                std::uint64_t seed);
/// B with B[row_perm[i]][col_perm[j]] = A[i][j], as mailroom::permute() computes it.
sparse_matrix::serial permute(const sparse_matrix::serial& a,
                              const std::vector<std::int64_t>& row_perm,
                              const std::vector<std::int64_t>& col_perm);
/// The transpose of a.
sparse_matrix::serial transpose(const sparse_matrix::serial& a);
}  // namespace reference

}  // namespace mailroom
