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

}  // namespace mailroom::apps::permute_matrix
