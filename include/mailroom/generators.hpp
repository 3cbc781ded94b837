// Deterministic inputs for the Bale kernels and for users' tests: random graphs and matrices,
// permutations, and Kronecker products of stars whose triangle counts are known in closed form.
// Every generator is collective and depends only on its arguments and the seed, not on the
// number of PEs, unless stated.
#pragma once

#include "mailroom/sparse_matrix.hpp"

#include <cstdint>
#include <vector>

namespace mailroom {

enum class triangle { full, lower, upper };

/// Erdős–Rényi G(n, p) adjacency matrix (pattern), p = nnz_per_row / n, by geometric gap
/// skipping (each row from its own stream). full: every off-diagonal entry independently;
/// lower/upper: an undirected graph, each edge {i, j} once, strictly below/above the diagonal.
sparse_matrix erdos_renyi(std::int64_t n, double nnz_per_row, std::uint64_t seed,
                          triangle shape = triangle::full);

/// The Kronecker product of the star graphs K_{1,m} for m in `stars` (Bale's "kron" graphs),
/// as a strictly lower-triangular adjacency matrix (pattern) of an undirected graph with
/// n = prod(m + 1) vertices.
sparse_matrix kronecker_stars(const std::vector<std::int64_t>& stars);
/// The number of triangles of kronecker_stars(stars), in closed form.
std::int64_t kronecker_stars_triangles(const std::vector<std::int64_t>& stars);

/// A uniformly random permutation of 0..n-1, distributed cyclically: element i on PE i % P at
/// local index i / P. Independent of P.
std::vector<std::int64_t> random_permutation(std::int64_t n, std::uint64_t seed);

/// The toposort input: a random n x n unit upper-triangular matrix (ones on the diagonal,
/// about nnz_per_row entries per row) with its rows and columns randomly permuted.
sparse_matrix permuted_upper_triangular(std::int64_t n, double nnz_per_row, std::uint64_t seed);

/// Collective: B with B[row_perm[i]][col_perm[j]] = A[i][j]; both permutations distributed
/// cyclically like random_permutation's. A reference for tests (simple, not fast).
sparse_matrix permute(const sparse_matrix& a, const std::vector<std::int64_t>& row_perm,
                      const std::vector<std::int64_t>& col_perm);
/// Collective: the transpose. A reference for tests (simple, not fast).
sparse_matrix transpose(const sparse_matrix& a);

}  // namespace mailroom
