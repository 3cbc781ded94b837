// SPDX-License-Identifier: MIT
// Permute-matrix (Bale's "permute_matrix"): apply a random row permutation and a random column
// permutation to a distributed sparse matrix. One header for the variants, each in its own file.
#pragma once

#include <mailroom/mailroom.hpp>
#include <mailroom/sparse_matrix.hpp>

namespace mailroom::apps::permute_matrix {

struct problem {
  sparse_matrix a;                     ///< this PE's rows of A
  std::vector<std::int64_t> row_perm;  ///< this PE's share (cyclic) of the row permutation
  std::vector<std::int64_t> col_perm;  ///< this PE's share (cyclic) of the column permutation
};

// Every variant returns this PE's rows of B, where B[row_perm[i]][col_perm[j]] = A[i][j] (values
// carried along when A has them), distributed cyclically like A. Collective.
sparse_matrix naive(const problem& pb);     // MPI one-sided, one element at a time
sparse_matrix bsp(const problem& pb);       // MPI_Alltoallv supersteps
sparse_matrix conveyor(const problem& pb);  // mailroom::conveyor loops
sparse_matrix selector(const problem& pb);  // actor/selector API, typed messages
sparse_matrix lambda(const problem& pb);    // actor/selector API, lambda messages

/// The floor's input: this PE's rows of A as a matrix of their own (common/own_rows.hpp), a
/// permutation of those rows (the order of their new global rows) and a random permutation of
/// the columns they use. Built before timing; local.
struct local_problem {
  sparse_matrix::serial a;
  std::vector<std::int64_t> row_perm, col_perm;
};
local_problem local_problem_of(const problem& pb, std::uint64_t seed);
/// The floor: local_problem's matrix permuted (B[row_perm[i]][col_perm[j]] = A[i][j], rows
/// sorted) by the loops of the other variants with every remote access made local. Local.
sparse_matrix::serial local(const local_problem& lp);

}  // namespace mailroom::apps::permute_matrix
