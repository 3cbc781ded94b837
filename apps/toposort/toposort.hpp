// SPDX-License-Identifier: MIT
// Toposort (Bale's "toposort"): given a unit upper-triangular matrix whose rows and columns were
// randomly permuted, find row and column permutations that make it upper-triangular again.
// One header for the variants, each in its own file.
#pragma once

#include <mailroom/mailroom.hpp>
#include <mailroom/sparse_matrix.hpp>

#include <span>
#include <vector>

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
/// The floor: the serial algorithm over the whole matrix (`a` and its transpose `at` gathered on
/// one PE), the loop of naive with every remote access local. Returns whole permutations (row i's
/// new position at i). Local: the driver charges each PE 1/P of its time.
result local(const sparse_matrix::serial& a, const sparse_matrix::serial& at);

/// Shared by the asynchronous variants (aggregation reorders events, so rows record levels: one
/// more than the deepest pivot that removed one of their columns). Deals out positions from the
/// levels: the last ones to level 0, the ones before them to level 1, and so on; within a level
/// by PE, then by local row. A row's other columns were pivoted at lower levels, so they come
/// after it and the permuted matrix is upper triangular. Collective.
std::vector<std::int64_t> positions(std::span<const std::int64_t> level, std::int64_t n);

}  // namespace mailroom::apps::toposort
