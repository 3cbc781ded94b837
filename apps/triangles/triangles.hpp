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
std::int64_t naive(const sparse_matrix& l);     // MPI one-sided reads of remote rows
std::int64_t bsp(const sparse_matrix& l);       // MPI_Alltoallv supersteps
std::int64_t conveyor(const sparse_matrix& l);  // mailroom::conveyor loops
// actor/selector API: row i's columns up to j in one variable-size message, merged with row j
std::int64_t selector(const sparse_matrix& l);
std::int64_t wedges(const sparse_matrix& l);      // actor/selector API, a typed message per wedge
std::int64_t lambda(const sparse_matrix& l);      // actor/selector API, a lambda per wedge
std::int64_t concurrent(const sparse_matrix& l);  // wedges, handlers on every worker

/// The rows of L a PE's share of the count reads (rows j of its nonzeros L[i][j] but the first of
/// each row), copied to it before timing: CSR arrays, and for each of its nonzeros the row of the
/// copy that holds its column's row (-1 for the first of a row, whose row is never read).
struct rows_needed {
  std::vector<std::int64_t> row_ptr, col_idx, copy_of;
};
/// Collective: the copy of the rows this PE's share needs (one exchange of requests, two of rows).
rows_needed copy_rows_needed(const sparse_matrix& l);
/// The floor: this PE's share of the count (its rows' wedges), naive's merges with local reads,
/// in the copy. Returns this PE's count only (the PEs' counts add up to the whole).
std::int64_t local(const sparse_matrix& l, const rows_needed& copy);

}  // namespace mailroom::apps::triangles
