// SPDX-License-Identifier: MIT
// The triangle-counting mini-app for the driver: the input (an Erdős–Rényi graph or the strictly
// lower triangle of a Matrix Market file), the variants, and an exact count computed apart.
#include "common/driver.hpp"
#include "triangles/triangles.hpp"

#include <mailroom/generators.hpp>
#include <mailroom/matrix_market.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <numeric>
#include <span>
#include <utility>

namespace mailroom::apps {

namespace triangles {
rows_needed copy_rows_needed(const sparse_matrix& l) {
  const int P = num_pes();
  // The rows to ask for, once each, grouped by owner (each group in local order).
  const auto by_owner = [P](std::int64_t a, std::int64_t b) {
    return std::pair(a % P, a / P) < std::pair(b % P, b / P);
  };
  std::vector<std::int64_t> want;
  for (std::int64_t r = 0; r < l.local_rows(); ++r)
    for (const std::int64_t j : l.row(r).subspan(std::min<std::size_t>(l.row(r).size(), 1)))
      want.push_back(j);
  std::ranges::sort(want, by_owner);
  want.erase(std::unique(want.begin(), want.end()), want.end());
  std::vector<int> send_n(P), send_at(P), recv_at(P);
  for (const std::int64_t j : want) ++send_n[j % P];
  std::exclusive_scan(send_n.begin(), send_n.end(), send_at.begin(), 0);
  const std::vector<int> recv_n = all_to_all(std::span<const int>(send_n));
  std::exclusive_scan(recv_n.begin(), recv_n.end(), recv_at.begin(), 0);
  std::vector<std::int64_t> asked(static_cast<std::size_t>(recv_at.back() + recv_n.back()));
  all_to_all_v<std::int64_t>(want, send_n, send_at, asked, recv_n, recv_at);
  // The owners answer with the rows' lengths, then the rows, in the order asked.
  std::vector<std::int64_t> lengths(asked.size()), got(want.size() + 1), rows;
  for (std::size_t i = 0; i < asked.size(); ++i) {
    const auto row = l.row(sparse_matrix::local_index(asked[i], P));
    lengths[i] = std::ssize(row);
    rows.insert(rows.end(), row.begin(), row.end());
  }
  all_to_all_v<std::int64_t>(lengths, recv_n, recv_at, std::span(got).subspan(1), send_n, send_at);
  std::vector<int> rows_n(P), rows_at(P), copy_n(P), copy_at(P);
  for (int p = 0; p < P; ++p) {
    rows_n[p] = static_cast<int>(
        std::reduce(lengths.begin() + recv_at[p], lengths.begin() + recv_at[p] + recv_n[p]));
    copy_n[p] = static_cast<int>(
        std::reduce(got.begin() + 1 + send_at[p], got.begin() + 1 + send_at[p] + send_n[p]));
  }
  std::exclusive_scan(rows_n.begin(), rows_n.end(), rows_at.begin(), 0);
  std::exclusive_scan(copy_n.begin(), copy_n.end(), copy_at.begin(), 0);
  rows_needed copy;
  std::inclusive_scan(got.begin(), got.end(), got.begin());
  copy.row_ptr = std::move(got);
  copy.col_idx.resize(static_cast<std::size_t>(copy.row_ptr.back()));
  all_to_all_v<std::int64_t>(rows, rows_n, rows_at, copy.col_idx, copy_n, copy_at);
  // Where each nonzero's row is in the copy.
  copy.copy_of.assign(l.col_idx().size(), -1);
  for (std::int64_t r = 0; r < l.local_rows(); ++r)
    for (std::int64_t k = l.row_ptr()[r] + 1; k < l.row_ptr()[r + 1]; ++k)
      copy.copy_of[k] = std::ranges::lower_bound(want, l.col_idx()[k], by_owner) - want.begin();
  return copy;
}
}  // namespace triangles

namespace {

// |a ∩ b| of two sorted rows, by merging them (the push variants search instead: a different
// method; naive and local merge too, but rows they read from another PE or from their copies).
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
    if (std::ranges::find(s.variants, "local") != s.variants.end())
      copy_ = triangles::copy_rows_needed(l_);
  }
  void reset() override { count_ = -1; }
  void run(std::string_view v) override {
    ran_ = v;
    if (v == "naive")
      count_ = triangles::naive(l_);
    else if (v == "bsp")
      count_ = triangles::bsp(l_);
    else if (v == "conveyor")
      count_ = triangles::conveyor(l_);
    else if (v == "selector")
      count_ = triangles::selector(l_);
    else if (v == "wedges")
      count_ = triangles::wedges(l_);
    else if (v == "lambda")
      count_ = triangles::lambda(l_);
    else if (v == "concurrent")
      count_ = triangles::concurrent(l_);
    else if (v == "local")
      count_ = triangles::local(l_, copy_);
  }
  // Every variant returns the whole graph's count on every PE: each PE's must be exact (local's
  // are the PEs' shares: their sum must be).
  bool check(std::string_view v) override {
    if (v == "local") return all_reduce(count_) == expected_;
    return all_reduce(std::int64_t{count_ != expected_}) == 0;
  }
  [[nodiscard]] std::int64_t ops_per_pe() const override { return l_.local_nnz(); }
  [[nodiscard]] std::string result() const override {
    return fmt::format("triangles {}", ran_ == "local" ? all_reduce(count_) : count_);
  }

 private:
  sparse_matrix l_;
  triangles::rows_needed copy_;  // the local variant's copy of the rows it reads
  std::int64_t expected_ = 0, count_ = -1;
  std::string ran_;  // the variant whose count count_ holds
};

}  // namespace

app_info triangles_app() {
  app_info app{"triangles",
               "counts the triangles of a graph given by its lower-triangular adjacency matrix "
               "(Bale's triangle)",
               "nonzero",
               10'000,
               0,
               300,
               0,
               {"naive", "bsp", "conveyor", "selector", "wedges", "lambda", "concurrent", "local"},
               [] { return std::make_unique<triangles_bench>(); },
               35,
               6,
               true,
               "rows"};
  app.local_floor =
      "this PE's share of the count, naive's merges in copies of the rows it reads, made "
      "before timing: no communication";
  return app;
}

}  // namespace mailroom::apps
