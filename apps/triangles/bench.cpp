// SPDX-License-Identifier: MIT
// The triangle-counting mini-app for the driver: the input (an Erdős–Rényi graph or the strictly
// lower triangle of a Matrix Market file), the variants, and an exact count computed apart.
#include "common/driver.hpp"
#include "triangles/triangles.hpp"

#include <mailroom/generators.hpp>
#include <mailroom/matrix_market.hpp>

#include <algorithm>
#include <array>
#include <span>

namespace mailroom::apps {

namespace {

// |a ∩ b| of two sorted rows, by merging them (the variants search instead: a different method).
std::int64_t common(std::span<const std::int64_t> a, std::span<const std::int64_t> b) {
  std::int64_t n = 0;
  for (auto x = a.begin(), y = b.begin(); x != a.end() && y != b.end();) {
    if (*x < *y) {
      ++x;
    } else if (*y < *x) {
      ++y;
    } else {
      ++n, ++x, ++y;
    }
  }
  return n;
}

// Row i of a matrix held as CSR arrays.
std::span<const std::int64_t> csr_row(const std::vector<std::int64_t>& row_ptr,
                                      const std::vector<std::int64_t>& col_idx, std::int64_t i) {
  const auto at = static_cast<std::size_t>(i);
  return std::span(col_idx).subspan(static_cast<std::size_t>(row_ptr[at]),
                                    static_cast<std::size_t>(row_ptr[at + 1] - row_ptr[at]));
}

// Serial count on PE 0 of the gathered matrix, broadcast to every PE.
std::int64_t count_gathered(const sparse_matrix& l) {
  const auto m = l.gather(0);
  std::int64_t n = 0;
  for (std::int64_t i = 0; i + 1 < std::ssize(m.row_ptr); ++i)
    for (const std::int64_t j : csr_row(m.row_ptr, m.col_idx, i))
      n += common(csr_row(m.row_ptr, m.col_idx, i), csr_row(m.row_ptr, m.col_idx, j));
  return broadcast(n, 0);
}

// Too big to gather: every PE in turn broadcasts its rows, and every PE merges each of its rows
// i with the broadcast rows j it has a nonzero L[i][j] for.
std::int64_t count_broadcast(const sparse_matrix& l) {
  const int P = num_pes(), me = this_pe().rank();
  std::int64_t n = 0;
  for (int root = 0; root < P; ++root) {
    std::array<std::int64_t, 2> len{l.local_rows(), l.local_nnz()};
    len = broadcast(len, root);
    std::vector<std::int64_t> rp(static_cast<std::size_t>(len[0] + 1)),
        ci(static_cast<std::size_t>(len[1]));
    if (me == root) rp = l.row_ptr(), ci = l.col_idx();
    broadcast(std::span(rp), root);
    broadcast(std::span(ci), root);
    for (std::int64_t r = 0; r < l.local_rows(); ++r)
      for (const std::int64_t j : l.row(r))
        if (sparse_matrix::owner(j, P) == root)
          n += common(l.row(r), csr_row(rp, ci, sparse_matrix::local_index(j, P)));
  }
  return all_reduce(n);
}

// This PE's rows of the strictly lower triangle of a square matrix.
sparse_matrix strictly_lower(const sparse_matrix& a) {
  MAILROOM_CHECK(a.rows() == a.cols(), "triangles: the matrix must be square, not {} x {}",
                 a.rows(), a.cols());
  std::vector<std::int64_t> row_ptr{0}, col_idx;
  for (std::int64_t r = 0; r < a.local_rows(); ++r) {
    for (const std::int64_t c : a.row(r))
      if (c < a.global_row(r)) col_idx.push_back(c);
    row_ptr.push_back(std::ssize(col_idx));
  }
  return {a.rows(), a.cols(), std::move(row_ptr), std::move(col_idx)};
}

class triangles_bench final : public kernel_bench {
 public:
  void prepare(const sizes& s) override {
    // nnz_per_row counts nonzeros of L, as Bale's -z does: vertices of about twice as many
    // neighbours (erdos_renyi's nnz_per_row counts neighbours, half of them in L's row).
    l_ = s.matrix.empty() ? erdos_renyi(s.n * num_pes(), 2 * s.nnz_per_row, s.seed, triangle::lower)
                          : strictly_lower(matrix_market::read(s.matrix));
    // Up to this size PE 0 holds the whole matrix (64 MB of columns) and counts alone.
    constexpr std::int64_t k_gather_nnz = 8'000'000;
    expected_ = l_.global_nnz() <= k_gather_nnz ? count_gathered(l_) : count_broadcast(l_);
  }
  void reset() override { count_ = -1; }
  void run(std::string_view v) override {
    if (v == "naive")
      count_ = triangles::naive(l_);
    else if (v == "bsp")
      count_ = triangles::bsp(l_);
    else if (v == "conveyor")
      count_ = triangles::conveyor(l_);
    else if (v == "selector")
      count_ = triangles::selector(l_);
    else if (v == "lambda")
      count_ = triangles::lambda(l_);
    else if (v == "concurrent")
      count_ = triangles::concurrent(l_);
  }
  // Every variant returns the whole graph's count on every PE: each PE's must be exact.
  bool check(std::string_view) override {
    return all_reduce(std::int64_t{count_ != expected_}) == 0;
  }
  [[nodiscard]] std::int64_t ops_per_pe() const override { return l_.local_nnz(); }

 private:
  sparse_matrix l_;
  std::int64_t expected_ = 0, count_ = -1;
};

}  // namespace

app_info triangles_app() {
  return {"triangles",
          "counts the triangles of a graph given by its lower-triangular adjacency matrix "
          "(Bale's triangle)",
          "nonzero",
          10'000,
          0,
          300,
          0,
          {"naive", "bsp", "conveyor", "selector", "lambda", "concurrent"},
          [] { return std::make_unique<triangles_bench>(); },
          35,
          6,
          true,
          "rows"};
}

}  // namespace mailroom::apps
