// Toposort (Bale's "toposort"): given a unit upper-triangular matrix whose rows and columns were
// randomly permuted, find row and column permutations that make it upper-triangular again.
// One header for the variants, each in its own file.
#pragma once

#include <mailroom/mailroom.hpp>

namespace mailroom::apps::toposort {

struct result {
  std::vector<std::int64_t> row_perm;  ///< this PE's share (cyclic): new position of row i
  std::vector<std::int64_t> col_perm;  ///< this PE's share (cyclic): new position of column j
};

// Every variant returns permutations such that permute(a, row_perm, col_perm) is upper-
// triangular with ones on the diagonal. Collective. `at` is the transpose of `a` (given, as in
// Bale, so that a PE can reach the rows that have a nonzero in a given column).
result naive(const sparse_matrix& a, const sparse_matrix& at);
result bsp(const sparse_matrix& a, const sparse_matrix& at);
result conveyor(const sparse_matrix& a, const sparse_matrix& at);
result selector(const sparse_matrix& a, const sparse_matrix& at);
result lambda(const sparse_matrix& a, const sparse_matrix& at);

}  // namespace mailroom::apps::toposort
