// SPDX-License-Identifier: MIT
// Transpose-matrix (Bale's "transpose_matrix"): the transpose of a distributed sparse matrix.
// One header for the variants, each in its own file.
#pragma once

#include <mailroom/mailroom.hpp>
#include <mailroom/sparse_matrix.hpp>

namespace mailroom::apps::transpose_matrix {

// Every variant returns this PE's rows of A^T (values carried along when A has them),
// distributed cyclically like A. Collective.
sparse_matrix naive(const sparse_matrix& a);     // MPI one-sided, one element at a time
sparse_matrix bsp(const sparse_matrix& a);       // MPI_Alltoallv supersteps
sparse_matrix conveyor(const sparse_matrix& a);  // mailroom::conveyor loops
sparse_matrix selector(const sparse_matrix& a);  // actor/selector API, typed messages
sparse_matrix lambda(const sparse_matrix& a);    // actor/selector API, lambda messages
/// The floor: the transpose of a matrix of this PE's own (its rows of A, common/own_rows.hpp) by
/// the loops of the other variants with every remote access made local. Local.
sparse_matrix::serial local(const sparse_matrix::serial& a);

}  // namespace mailroom::apps::transpose_matrix
