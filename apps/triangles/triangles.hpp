// SPDX-License-Identifier: MIT
// Triangle counting (Bale's "triangle"): the number of triangles of an undirected graph given by
// its strictly lower-triangular adjacency matrix L. One header for the variants.
#pragma once

#include <mailroom/mailroom.hpp>
#include <mailroom/sparse_matrix.hpp>

namespace mailroom::apps::triangles {

// Every variant returns the number of triangles of the whole graph, on every PE. Collective.
// (Bale's method: for each nonzero L[i][j], count |row i of L  ∩  row j of L|, fetching row j
// from the PE that owns it, or sending row i's columns to it.)
std::int64_t naive(const sparse_matrix& l);       // MPI one-sided reads of remote rows
std::int64_t bsp(const sparse_matrix& l);         // MPI_Alltoallv supersteps
std::int64_t conveyor(const sparse_matrix& l);    // mailroom::conveyor loops
std::int64_t selector(const sparse_matrix& l);    // actor/selector API, typed messages
std::int64_t lambda(const sparse_matrix& l);      // actor/selector API, lambda messages
std::int64_t concurrent(const sparse_matrix& l);  // typed messages, handlers on every worker

}  // namespace mailroom::apps::triangles
