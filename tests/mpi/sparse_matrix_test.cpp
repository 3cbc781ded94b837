// SPDX-License-Identifier: MIT
// The memory layer's sparse matrices at any number of PEs: construction, gather/scatter, the
// generators (each equal to its serial reference, hence independent of the number of PEs, and
// checked against independent properties: degree statistics, brute-force triangle counts, a
// serial toposort), the permute/transpose references and Matrix Market files. With an argument,
// the program makes one named mistake instead and must die with the library's message.
#include <mailroom/generators.hpp>
#include <mailroom/mailroom.hpp>
#include <mailroom/matrix_market.hpp>
#include <mailroom/sparse_matrix.hpp>

#include "mpi_check.hpp"

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace mr = mailroom;
using serial = mr::sparse_matrix::serial;

namespace {

using mailroom_test::g_me;
using mailroom_test::g_pes;
using mailroom_test::sum_over_pes;

long long ll(std::int64_t v) { return static_cast<long long>(v); }

// A cyclically distributed vector of n elements, whole on every PE.
std::vector<std::int64_t> allgather_cyclic(const std::vector<std::int64_t>& mine, std::int64_t n) {
  std::vector<int> counts(static_cast<std::size_t>(g_pes)), displs(static_cast<std::size_t>(g_pes));
  for (int p = 0; p < g_pes; ++p)
    counts[static_cast<std::size_t>(p)] =
        static_cast<int>(mr::sparse_matrix::local_rows(n, p, g_pes));
  std::exclusive_scan(counts.begin(), counts.end(), displs.begin(), 0);
  std::vector<std::int64_t> blocks(static_cast<std::size_t>(n)), whole(static_cast<std::size_t>(n));
  MPI_Allgatherv(mine.data(), static_cast<int>(mine.size()), MPI_INT64_T, blocks.data(),
                 counts.data(), displs.data(), MPI_INT64_T, MPI_COMM_WORLD);
  for (std::int64_t i = 0; i < n; ++i)
    whole[static_cast<std::size_t>(i)] =
        blocks[static_cast<std::size_t>(displs[static_cast<std::size_t>(i % g_pes)] + i / g_pes)];
  return whole;
}

// This PE's cyclic share of a whole vector.
std::vector<std::int64_t> share(const std::vector<std::int64_t>& whole) {
  std::vector<std::int64_t> mine;
  for (std::size_t i = static_cast<std::size_t>(g_me); i < whole.size();
       i += static_cast<std::size_t>(g_pes))
    mine.push_back(whole[i]);
  return mine;
}

std::vector<std::int64_t> inverse(const std::vector<std::int64_t>& perm) {
  std::vector<std::int64_t> inv(perm.size());
  for (std::size_t i = 0; i < perm.size(); ++i)
    inv[static_cast<std::size_t>(perm[i])] = static_cast<std::int64_t>(i);
  return inv;
}

// A random matrix (same on every PE for the same rng state), about `density` of it filled.
serial random_serial(std::mt19937_64& rng, std::int64_t rows, std::int64_t cols, double density,
                     bool values) {
  serial m{rows, cols, {0}, {}, {}};
  std::uniform_real_distribution<double> u(0, 1);
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cols; ++c)
      if (u(rng) < density) {
        m.col_idx.push_back(c);
        if (values) m.values.push_back(u(rng) * 100 - 50);
      }
    m.row_ptr.push_back(static_cast<std::int64_t>(m.col_idx.size()));
  }
  return m;
}

// Rows of the whole matrix as (row, col) pairs must equal this PE's part, row by row.
bool part_matches(const mr::sparse_matrix& a, const serial& whole) {
  if (a.rows() != whole.rows || a.cols() != whole.cols) return false;
  if (a.local_rows() != mr::sparse_matrix::local_rows(whole.rows, g_me, g_pes)) return false;
  for (std::int64_t l = 0; l < a.local_rows(); ++l) {
    const auto r = static_cast<std::size_t>(a.global_row(l));
    if (a.global_row(l) != l * g_pes + g_me) return false;
    const auto begin = whole.col_idx.begin() + whole.row_ptr[r];
    const auto end = whole.col_idx.begin() + whole.row_ptr[r + 1];
    const auto row = a.row(l);
    if (!std::equal(row.begin(), row.end(), begin, end)) return false;
    if (!whole.values.empty() && !row.empty()) {
      const auto v = a.row_values(l);
      if (!std::equal(v.begin(), v.end(), whole.values.begin() + whole.row_ptr[r])) return false;
    }
  }
  return true;
}

// ---- construction -------------------------------------------------------------------------------

int constructor_sorts_rows_and_carries_values() {
  int failures = 0;
  const std::int64_t rows = 10, cols = 8;
  const std::int64_t lrows = mr::sparse_matrix::local_rows(rows, g_me, g_pes);
  std::vector<std::int64_t> row_ptr{0}, col_idx;
  std::vector<double> values;
  for (std::int64_t l = 0; l < lrows; ++l) {
    const std::int64_t r = l * g_pes + g_me;
    for (std::int64_t c : {7, 2, 5, 0}) {  // deliberately unsorted
      if ((c + r) % 3 == 0) continue;
      col_idx.push_back(c);
      values.push_back(static_cast<double>(100 * r + c));
    }
    row_ptr.push_back(static_cast<std::int64_t>(col_idx.size()));
  }
  const mr::sparse_matrix a(rows, cols, row_ptr, col_idx, values);
  EXPECT(a.local_rows() == lrows, "local_rows %lld, expected %lld", ll(a.local_rows()), ll(lrows));
  for (std::int64_t l = 0; l < a.local_rows(); ++l) {
    const auto row = a.row(l);
    const auto v = a.row_values(l);
    EXPECT(std::is_sorted(row.begin(), row.end()), "row %lld not sorted", ll(a.global_row(l)));
    for (std::size_t k = 0; k < row.size(); ++k)
      EXPECT(v[k] == static_cast<double>(100 * a.global_row(l) + row[k]),
             "row %lld column %lld carries value %g", ll(a.global_row(l)), ll(row[k]), v[k]);
  }
  EXPECT(a.global_nnz() == sum_over_pes(a.local_nnz()), "global_nnz %lld", ll(a.global_nnz()));
  // The rows' distribution places every row where owner() and local_index() do.
  const mr::cyclic d = a.row_distribution();
  EXPECT(d.size() == rows && mr::local_size(d, mr::this_pe()) == static_cast<std::size_t>(lrows),
         "row_distribution: %lld rows, %zu here", ll(d.size()), mr::local_size(d, mr::this_pe()));
  for (std::int64_t r = 0; r < rows; ++r)
    EXPECT(d.owner(r).rank() == mr::sparse_matrix::owner(r, g_pes) &&
               static_cast<std::int64_t>(d.local(r)) == mr::sparse_matrix::local_index(r, g_pes),
           "row_distribution places row %lld on PE %d at %zu", ll(r), d.owner(r).rank(),
           d.local(r));
  for (std::int64_t l = 0; l < lrows; ++l)
    EXPECT(d.global(mr::this_pe(), static_cast<std::size_t>(l)) == a.global_row(l),
           "row_distribution: local row %lld is global %lld", ll(l), ll(a.global_row(l)));
  // A pattern matrix has no values; the default-constructed one is empty and 0 x 0.
  const mr::sparse_matrix p(rows, cols, row_ptr, col_idx);
  EXPECT(!p.has_values() && p.row_values(0).empty() == true, "a pattern matrix has values");
  const mr::sparse_matrix e;
  EXPECT(e.rows() == 0 && e.local_rows() == 0 && e.local_nnz() == 0, "default matrix not empty");
  return failures;
}

// ---- gather / scatter ---------------------------------------------------------------------------

int gather_scatter_round_trip() {
  int failures = 0;
  std::mt19937_64 rng(2024);
  struct shape {
    std::int64_t rows, cols;
    double density;
  };
  for (const shape s :
       {shape{0, 0, 0}, shape{0, 5, 0}, shape{1, 1, 1}, shape{2, 7, 0.5}, shape{3, 3, 0.9},
        shape{5, 1, 0.5}, shape{17, 13, 0.3}, shape{100, 80, 0.05}, shape{64, 64, 0.0}}) {
    for (const bool values : {false, true}) {
      const serial whole = random_serial(rng, s.rows, s.cols, s.density, values);
      const std::int64_t nnz = static_cast<std::int64_t>(whole.col_idx.size());
      for (const int root : {0, g_pes - 1}) {
        // Only the root needs the whole matrix.
        const auto a = mr::sparse_matrix::scatter(g_me == root ? whole : serial{}, root);
        EXPECT(part_matches(a, whole), "%lld x %lld (values %d, root %d): wrong part on this PE",
               ll(s.rows), ll(s.cols), values, root);
        EXPECT(a.global_nnz() == nnz, "global_nnz %lld, expected %lld", ll(a.global_nnz()),
               ll(nnz));
        const serial back = a.gather(root);
        if (g_me == root)
          EXPECT(back == whole, "%lld x %lld (values %d, root %d): gather differs", ll(s.rows),
                 ll(s.cols), values, root);
        else
          EXPECT(back.rows == 0 && back.row_ptr.empty() && back.col_idx.empty(),
                 "a PE other than the root got %lld rows", ll(back.rows));
      }
    }
  }
  return failures;
}

// ---- generators equal their serial references ---------------------------------------------------

int generators_equal_their_serial_references() {
  int failures = 0;
  const char* shape_names[] = {"full", "lower", "upper"};
  for (const std::int64_t n : {0, 1, 3, 10, 257, 2000})
    for (const double d : {0.0, 0.5, 4.0, 30.0, 5000.0})
      for (const mr::triangle t : {mr::triangle::full, mr::triangle::lower, mr::triangle::upper})
        for (const std::uint64_t seed : {1ull, 0xfeedull}) {
          const auto g = mr::erdos_renyi(n, d, seed, t).gather();
          if (g_me == 0)
            EXPECT(g == mr::reference::erdos_renyi(n, d, seed, t),
                   "erdos_renyi(%lld, %g, %llu, %s) differs from the reference", ll(n), d,
                   static_cast<unsigned long long>(seed), shape_names[static_cast<int>(t)]);
        }
  const std::vector<std::vector<std::int64_t>> star_lists = {
      {}, {0}, {4}, {1, 1}, {2, 3}, {3, 4, 5}, {1, 2, 1, 3}, {0, 5, 2}};
  for (const auto& stars : star_lists) {
    const auto g = mr::kronecker_stars(stars).gather();
    if (g_me == 0)
      EXPECT(g == mr::reference::kronecker_stars(stars),
             "kronecker_stars (%zu stars) differs from the reference", stars.size());
  }
  for (const std::int64_t n : {0, 1, 2, 3, 5, 100, 4099}) {
    for (const std::uint64_t seed : {3ull, 99ull}) {
      const auto perm = allgather_cyclic(mr::random_permutation(n, seed), n);
      EXPECT(perm == mr::reference::random_permutation(n, seed),
             "random_permutation(%lld, %llu) differs from the reference", ll(n),
             static_cast<unsigned long long>(seed));
      const auto g = mr::permuted_upper_triangular(n, 6, seed).gather();
      if (g_me == 0)
        EXPECT(g == mr::reference::permuted_upper_triangular(n, 6, seed),
               "permuted_upper_triangular(%lld, 6, %llu) differs from the reference", ll(n),
               static_cast<unsigned long long>(seed));
    }
  }
  // The seed matters.
  if (g_me == 0) {
    EXPECT(mr::reference::erdos_renyi(500, 5, 1) != mr::reference::erdos_renyi(500, 5, 2),
           "erdos_renyi ignores its seed");
    EXPECT(mr::reference::random_permutation(500, 1) != mr::reference::random_permutation(500, 2),
           "random_permutation ignores its seed");
    EXPECT(mr::reference::permuted_upper_triangular(500, 5, 1) !=
               mr::reference::permuted_upper_triangular(500, 5, 2),
           "permuted_upper_triangular ignores its seed");
  }
  return failures;
}

// ---- fingerprints: the same at every PE count ---------------------------------------------------
// The references above share the generators' per-row code, so they cannot show that the code
// never looks at the number of PEs; these constants can: they were computed at 1 PE and every
// run at 2, 3 or 4 PEs must reproduce them. (They change only when a generator's algorithm does;
// the failure message prints the new value.)

std::uint64_t fingerprint(const std::vector<std::int64_t>& v, std::uint64_t h = 0) {
  for (const std::int64_t x : v) {
    h = (h ^ static_cast<std::uint64_t>(x)) * 0x100000001b3ull;
    h ^= h >> 29;
  }
  return h * 0x9e3779b97f4a7c15ull + v.size();
}

std::uint64_t fingerprint(const serial& m) {
  return fingerprint(
      m.col_idx, fingerprint(m.row_ptr, fingerprint(std::vector<std::int64_t>{m.rows, m.cols})));
}

int fingerprints_are_the_same_at_every_pe_count() {
  int failures = 0;
  struct known {
    const char* what;
    std::uint64_t value;
  };
  const std::uint64_t got[] = {
      fingerprint(mr::erdos_renyi(1000, 8, 42, mr::triangle::full).gather()),
      fingerprint(mr::erdos_renyi(1000, 8, 42, mr::triangle::lower).gather()),
      fingerprint(mr::erdos_renyi(1000, 8, 42, mr::triangle::upper).gather()),
      fingerprint(mr::kronecker_stars({2, 3, 4}).gather()),
      fingerprint(allgather_cyclic(mr::random_permutation(1000, 7), 1000)),
      fingerprint(mr::permuted_upper_triangular(1000, 8, 42).gather())};
  const known expected[] = {{"erdos_renyi full", 0x36d96c7111ce734bull},
                            {"erdos_renyi lower", 0x99154bd825dc448cull},
                            {"erdos_renyi upper", 0x5ea3c769325e9705ull},
                            {"kronecker_stars", 0x8ea2c3e44ef022deull},
                            {"random_permutation", 0x8ba1037f8981d55aull},
                            {"permuted_upper_triangular", 0x42a306885e59e96bull}};
  if (g_me != 0) return 0;
  for (std::size_t k = 0; k < std::size(got); ++k)
    EXPECT(got[k] == expected[k].value, "%s: fingerprint 0x%016llx, expected 0x%016llx",
           expected[k].what, static_cast<unsigned long long>(got[k]),
           static_cast<unsigned long long>(expected[k].value));
  return failures;
}

// ---- Erdős–Rényi statistics ---------------------------------------------------------------------

int erdos_renyi_statistics() {
  int failures = 0;
  const std::int64_t n = 20000;
  const double d = 10, p = d / static_cast<double>(n);
  for (const mr::triangle t : {mr::triangle::full, mr::triangle::lower, mr::triangle::upper}) {
    const auto a = mr::erdos_renyi(n, d, 77, t);
    std::int64_t misplaced = 0, left_half = 0;
    double sum_sq = 0;
    for (std::int64_t l = 0; l < a.local_rows(); ++l) {
      const std::int64_t i = a.global_row(l);
      const auto row = a.row(l);
      for (const std::int64_t j : row) {
        misplaced += t == mr::triangle::full ? j == i : t == mr::triangle::lower ? j >= i : j <= i;
        left_half += j < n / 2;
      }
      // full: every row has n-1 candidates; lower/upper: row i's degree in the undirected graph.
      sum_sq += static_cast<double>(row.size() * row.size());
    }
    const std::int64_t nnz = a.global_nnz();
    misplaced = sum_over_pes(misplaced);
    left_half = sum_over_pes(left_half);
    MPI_Allreduce(MPI_IN_PLACE, &sum_sq, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    const double pairs = t == mr::triangle::full ? static_cast<double>(n) * (n - 1)
                                                 : static_cast<double>(n) * (n - 1) / 2;
    const double mean = pairs * p, sd = std::sqrt(pairs * p * (1 - p));
    EXPECT(misplaced == 0, "shape %d: %lld entries on the wrong side of the diagonal",
           static_cast<int>(t), ll(misplaced));
    EXPECT(std::abs(static_cast<double>(nnz) - mean) < 5 * sd,
           "shape %d: %lld nonzeros, expected %.0f +- %.0f", static_cast<int>(t), ll(nnz), mean,
           5 * sd);
    if (t == mr::triangle::full) {
      // Row degrees are Binomial(n-1, p): variance about d; columns fall in each half evenly.
      const double m1 = static_cast<double>(nnz) / static_cast<double>(n);
      const double var = sum_sq / static_cast<double>(n) - m1 * m1;
      EXPECT(var > 0.9 * d && var < 1.1 * d, "row degree variance %.2f, expected about %.1f", var,
             d);
      const double half = static_cast<double>(nnz) / 2;
      EXPECT(std::abs(static_cast<double>(left_half) - half) < 5 * std::sqrt(half / 2),
             "%lld of %lld nonzeros in the left half of the columns", ll(left_half), ll(nnz));
    }
  }
  // p = nnz_per_row / n is capped at 1: the complete graph.
  const auto k = mr::erdos_renyi(50, 1000, 5, mr::triangle::lower);
  EXPECT(k.global_nnz() == 50 * 49 / 2, "capped p: %lld nonzeros", ll(k.global_nnz()));
  return failures;
}

// ---- Kronecker products of stars ----------------------------------------------------------------

// Triangles of an undirected graph given by its strictly lower-triangular part: for each edge
// (i, j), the common neighbours k < j of i and j.
std::int64_t brute_force_triangles(const serial& l) {
  std::int64_t count = 0;
  for (std::int64_t i = 0; i < l.rows; ++i)
    for (auto e = l.row_ptr[static_cast<std::size_t>(i)];
         e < l.row_ptr[static_cast<std::size_t>(i) + 1]; ++e) {
      const auto j = static_cast<std::size_t>(l.col_idx[static_cast<std::size_t>(e)]);
      auto a = l.col_idx.begin() + l.row_ptr[static_cast<std::size_t>(i)];
      const auto a_end = l.col_idx.begin() + l.row_ptr[static_cast<std::size_t>(i) + 1];
      auto b = l.col_idx.begin() + l.row_ptr[j];
      const auto b_end = l.col_idx.begin() + l.row_ptr[j + 1];
      while (a != a_end && b != b_end) {
        if (*a < *b)
          ++a;
        else if (*b < *a)
          ++b;
        else {
          ++count;
          ++a;
          ++b;
        }
      }
    }
  return count;
}

int kronecker_triangles_match_brute_force() {
  int failures = 0;
  if (g_me != 0) return 0;  // serial checks of the reference (equal to the collective one above)
  const std::vector<std::vector<std::int64_t>> star_lists = {
      {},        {0},          {3},          {1, 1},          {2, 3},    {3, 4},
      {3, 4, 5}, {1, 2, 1, 3}, {2, 2, 2, 2}, {1, 1, 1, 1, 1}, {0, 5, 2}, {6, 1, 4}};
  for (const auto& stars : star_lists) {
    const auto l = mr::reference::kronecker_stars(stars);
    std::int64_t n = 1, odd = 1;
    for (auto m : stars) {
      n *= m + 1;
      odd *= 2 * m + 1;  // entries of the symmetric product, its one loop included
    }
    EXPECT(l.rows == n && l.cols == n, "%lld x %lld, expected %lld vertices", ll(l.rows),
           ll(l.cols), ll(n));
    EXPECT(static_cast<std::int64_t>(l.col_idx.size()) == (odd - 1) / 2, "%zu edges, expected %lld",
           l.col_idx.size(), ll((odd - 1) / 2));
    const std::int64_t oracle = mr::kronecker_stars_triangles(stars);
    const std::int64_t brute = brute_force_triangles(l);
    EXPECT(oracle == brute, "stars of %zu: closed form %lld, brute force %lld", stars.size(),
           ll(oracle), ll(brute));
    // The definition, directly: u ~ v when in every star one of the two digits is the centre.
    if (n <= 200) {
      std::vector<char> adj(static_cast<std::size_t>(n * n), 0);
      for (std::int64_t i = 0; i < n; ++i)
        for (auto e = l.row_ptr[static_cast<std::size_t>(i)];
             e < l.row_ptr[static_cast<std::size_t>(i) + 1]; ++e) {
          const auto j = l.col_idx[static_cast<std::size_t>(e)];
          adj[static_cast<std::size_t>(i * n + j)] = adj[static_cast<std::size_t>(j * n + i)] = 1;
        }
      std::int64_t wrong = 0, dense_triangles = 0;
      for (std::int64_t u = 0; u < n; ++u)
        for (std::int64_t v = 0; v < n; ++v) {
          bool edge = u != v;
          std::int64_t a = u, b = v;
          for (std::size_t s = stars.size(); s-- > 0;) {
            const std::int64_t radix = stars[s] + 1;
            if (a % radix != 0 && b % radix != 0) edge = false;
            a /= radix;
            b /= radix;
          }
          wrong += edge != (adj[static_cast<std::size_t>(u * n + v)] != 0);
        }
      for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = 0; j < i; ++j)
          if (adj[static_cast<std::size_t>(i * n + j)])
            for (std::int64_t k = 0; k < j; ++k)
              dense_triangles += adj[static_cast<std::size_t>(i * n + k)] &&
                                 adj[static_cast<std::size_t>(j * n + k)];
      EXPECT(wrong == 0, "stars of %zu: %lld adjacency entries differ from the definition",
             stars.size(), ll(wrong));
      EXPECT(dense_triangles == oracle, "stars of %zu: dense count %lld, closed form %lld",
             stars.size(), ll(dense_triangles), ll(oracle));
    }
  }
  // Two stars K_{1,a}, K_{1,b} give a*b triangles (each pair of leaves with the centres).
  EXPECT(mr::kronecker_stars_triangles({3, 4}) == 12, "K_{1,3} x K_{1,4}: %lld",
         ll(mr::kronecker_stars_triangles({3, 4})));
  return failures;
}

// ---- random permutations ------------------------------------------------------------------------

int random_permutation_is_uniform() {
  int failures = 0;
  const std::int64_t n = 1000;
  const auto perm = allgather_cyclic(mr::random_permutation(n, 5), n);
  auto sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::int64_t> iota(static_cast<std::size_t>(n));
  std::iota(iota.begin(), iota.end(), 0);
  EXPECT(sorted == iota, "random_permutation(%lld) is not a permutation", ll(n));
  if (g_me != 0) return failures;
  // Where each of 5 elements lands, over 4000 seeds: every (element, place) about 800 times.
  std::int64_t hits[5][5] = {};
  for (std::uint64_t seed = 0; seed < 4000; ++seed) {
    const auto p = mr::reference::random_permutation(5, seed);
    for (std::size_t k = 0; k < 5; ++k) ++hits[p[k]][k];
  }
  const double sd = std::sqrt(4000 * 0.2 * 0.8);
  for (auto& row : hits)
    for (const auto h : row)
      EXPECT(std::abs(static_cast<double>(h) - 800) < 5 * sd, "a place hit %lld times of 4000",
             ll(h));
  return failures;
}

// ---- the toposort input -------------------------------------------------------------------------

// Serial toposort: rows with one remaining column are peeled from the end. Returns false if the
// matrix is not a permuted triangular matrix with a full diagonal.
bool toposort(const serial& a, std::vector<std::int64_t>& row_pos,
              std::vector<std::int64_t>& col_pos) {
  const auto n = a.rows;
  const auto at = mr::reference::transpose(a);
  std::vector<std::int64_t> remaining(static_cast<std::size_t>(n));
  std::vector<char> col_done(static_cast<std::size_t>(n), 0);
  std::vector<std::int64_t> ready;
  for (std::int64_t r = 0; r < n; ++r) {
    remaining[static_cast<std::size_t>(r)] =
        a.row_ptr[static_cast<std::size_t>(r) + 1] - a.row_ptr[static_cast<std::size_t>(r)];
    if (remaining[static_cast<std::size_t>(r)] == 1) ready.push_back(r);
  }
  row_pos.assign(static_cast<std::size_t>(n), -1);
  col_pos.assign(static_cast<std::size_t>(n), -1);
  std::int64_t pos = n;
  while (!ready.empty()) {
    const std::int64_t r = ready.back();
    ready.pop_back();
    std::int64_t c = -1;
    for (auto e = a.row_ptr[static_cast<std::size_t>(r)];
         e < a.row_ptr[static_cast<std::size_t>(r) + 1]; ++e)
      if (!col_done[static_cast<std::size_t>(a.col_idx[static_cast<std::size_t>(e)])])
        c = a.col_idx[static_cast<std::size_t>(e)];
    if (c < 0) return false;
    --pos;
    row_pos[static_cast<std::size_t>(r)] = pos;
    col_pos[static_cast<std::size_t>(c)] = pos;
    col_done[static_cast<std::size_t>(c)] = 1;
    for (auto e = at.row_ptr[static_cast<std::size_t>(c)];
         e < at.row_ptr[static_cast<std::size_t>(c) + 1]; ++e) {
      const auto r2 = static_cast<std::size_t>(at.col_idx[static_cast<std::size_t>(e)]);
      if (--remaining[r2] == 1) ready.push_back(static_cast<std::int64_t>(r2));
    }
  }
  return pos == 0;
}

int permuted_upper_triangular_is_permuted_unit_upper() {
  int failures = 0;
  for (const std::int64_t n : {1, 2, 50, 3000}) {
    const double d = 8;
    const auto a = mr::permuted_upper_triangular(n, d, 11);
    const std::int64_t nnz = a.global_nnz();
    const auto whole = a.gather();
    if (g_me != 0) continue;
    std::vector<std::int64_t> row_pos, col_pos;
    EXPECT(toposort(whole, row_pos, col_pos), "n = %lld: toposort got stuck", ll(n));
    if (failures != 0) continue;
    const auto u = mr::reference::permute(whole, row_pos, col_pos);
    std::int64_t bad = 0;
    for (std::int64_t r = 0; r < n; ++r) {
      const auto b = u.row_ptr[static_cast<std::size_t>(r)];
      const auto e = u.row_ptr[static_cast<std::size_t>(r) + 1];
      bad += b == e || u.col_idx[static_cast<std::size_t>(b)] != r;  // the diagonal comes first
    }
    EXPECT(bad == 0, "n = %lld: %lld rows not unit upper triangular after toposort", ll(n),
           ll(bad));
    if (n >= 1000) {
      // About d entries per row: the diagonal plus Binomial(n(n-1)/2, 2(d-1)/(n-1)).
      const double pairs = static_cast<double>(n) * (n - 1) / 2,
                   p = 2 * (d - 1) / static_cast<double>(n - 1);
      const double mean = static_cast<double>(n) + pairs * p, sd = std::sqrt(pairs * p * (1 - p));
      EXPECT(std::abs(static_cast<double>(nnz) - mean) < 5 * sd,
             "n = %lld: %lld nonzeros, expected %.0f +- %.0f", ll(n), ll(nnz), mean, 5 * sd);
      // Really permuted: far from upper triangular as it stands.
      std::int64_t below = 0;
      for (std::int64_t r = 0; r < n; ++r)
        for (auto k = whole.row_ptr[static_cast<std::size_t>(r)];
             k < whole.row_ptr[static_cast<std::size_t>(r) + 1]; ++k)
          below += whole.col_idx[static_cast<std::size_t>(k)] < r;
      EXPECT(below > nnz / 4, "n = %lld: only %lld of %lld entries below the diagonal", ll(n),
             ll(below), ll(nnz));
    }
  }
  return failures;
}

// ---- permute and transpose ----------------------------------------------------------------------

int permute_and_transpose_references() {
  int failures = 0;
  std::mt19937_64 rng(31);
  for (const bool values : {false, true}) {
    for (const auto& [rows, cols] :
         {std::pair<std::int64_t, std::int64_t>{0, 0}, {1, 1}, {3, 7}, {40, 25}, {123, 123}}) {
      const serial whole = random_serial(rng, rows, cols, 0.2, values);
      const auto a = mr::sparse_matrix::scatter(whole);
      // Transpose: against the serial reference, dimensions swapped, twice is the identity.
      const auto t = mr::transpose(a);
      EXPECT(t.rows() == cols && t.cols() == rows, "transpose is %lld x %lld", ll(t.rows()),
             ll(t.cols()));
      const auto tg = t.gather();
      const auto ttg = mr::transpose(t).gather();
      if (g_me == 0) {
        EXPECT(tg == mr::reference::transpose(whole),
               "%lld x %lld: transpose differs from the "
               "reference",
               ll(rows), ll(cols));
        EXPECT(ttg == whole, "%lld x %lld: transpose twice is not the identity", ll(rows),
               ll(cols));
        EXPECT(mr::reference::transpose(mr::reference::transpose(whole)) == whole,
               "%lld x %lld: reference transpose twice is not the identity", ll(rows), ll(cols));
      }
      // Permute: by the identity, by random permutations and back by their inverses.
      std::vector<std::int64_t> id_rows(static_cast<std::size_t>(rows)),
          id_cols(static_cast<std::size_t>(cols));
      std::iota(id_rows.begin(), id_rows.end(), 0);
      std::iota(id_cols.begin(), id_cols.end(), 0);
      const auto same = mr::permute(a, share(id_rows), share(id_cols)).gather();
      const auto p = allgather_cyclic(mr::random_permutation(rows, 100 + rng() % 1000), rows);
      const auto q = allgather_cyclic(mr::random_permutation(cols, 100 + rng() % 1000), cols);
      const auto b = mr::permute(a, share(p), share(q));
      const auto bg = b.gather();
      const auto back = mr::permute(b, share(inverse(p)), share(inverse(q))).gather();
      if (g_me == 0) {
        EXPECT(same == whole, "%lld x %lld: permute by the identity changed the matrix", ll(rows),
               ll(cols));
        EXPECT(bg == mr::reference::permute(whole, p, q),
               "%lld x %lld: permute differs from the reference", ll(rows), ll(cols));
        EXPECT(back == whole, "%lld x %lld: permute then inverse permute is not the identity",
               ll(rows), ll(cols));
        EXPECT(mr::reference::permute(mr::reference::permute(whole, p, q), inverse(p),
                                      inverse(q)) == whole,
               "%lld x %lld: reference permute then inverse is not the identity", ll(rows),
               ll(cols));
        // B[p[i]][q[j]] = A[i][j], entry by entry.
        std::int64_t wrong = 0;
        for (std::int64_t i = 0; i < rows; ++i)
          for (auto k = whole.row_ptr[static_cast<std::size_t>(i)];
               k < whole.row_ptr[static_cast<std::size_t>(i) + 1]; ++k) {
            const auto r = static_cast<std::size_t>(p[static_cast<std::size_t>(i)]);
            const auto c = q[static_cast<std::size_t>(whole.col_idx[static_cast<std::size_t>(k)])];
            const auto first = bg.col_idx.begin() + bg.row_ptr[r];
            const auto last = bg.col_idx.begin() + bg.row_ptr[r + 1];
            const auto at = std::lower_bound(first, last, c);
            wrong += at == last || *at != c ||
                     (values && bg.values[static_cast<std::size_t>(at - bg.col_idx.begin())] !=
                                    whole.values[static_cast<std::size_t>(k)]);
          }
        EXPECT(wrong == 0 && bg.col_idx.size() == whole.col_idx.size(),
               "%lld x %lld: %lld entries not where B[p[i]][q[j]] = A[i][j] puts them", ll(rows),
               ll(cols), ll(wrong));
      }
    }
  }
  return failures;
}

// ---- Matrix Market files ------------------------------------------------------------------------

int matrix_market_read_write_round_trip() {
  int failures = 0;
  char path[256] = {};
  if (g_me == 0) {
    std::snprintf(path, sizeof path, "/tmp/mailroom_sparse_matrix_XXXXXX");
    const int fd = mkstemp(path);
    if (fd >= 0) close(fd);
  }
  MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
  std::mt19937_64 rng(8);
  for (const bool values : {false, true}) {
    const serial whole = random_serial(rng, 37, 29, 0.15, values);
    const auto a = mr::sparse_matrix::scatter(whole);
    mr::matrix_market::write(path, a);
    const auto b = mr::matrix_market::read(path);
    EXPECT(part_matches(b, whole), "values %d: the matrix read back differs on this PE", values);
    const auto g = b.gather();
    if (g_me == 0) EXPECT(g == whole, "values %d: the matrix read back differs", values);
  }
  // A generated matrix too, and a symmetric integer file of the corpus.
  const auto er = mr::erdos_renyi(300, 4, 9);
  mr::matrix_market::write(path, er);
  const auto er_back = mr::matrix_market::read(path).gather();
  const auto er_whole = er.gather();
  if (g_me == 0) EXPECT(er_back == er_whole, "erdos_renyi matrix read back differs");
  const auto sym =
      mr::matrix_market::read(std::string(MAILROOM_MTX_DIR) + "/integer_symmetric.mtx");
  const serial expected{
      4, 4, {0, 3, 5, 6, 8}, {0, 1, 3, 0, 2, 1, 0, 3}, {7, -3, 9, -3, 12, 12, 9, 0}};
  EXPECT(part_matches(sym, expected), "integer_symmetric.mtx: wrong part on this PE");
  mr::barrier();
  if (g_me == 0) std::remove(path);
  return failures;
}

// ---- misuse: one mistake, and the job must die with the library's message -----------------------

int misuse(const std::string& what) {
  const std::int64_t rows = g_pes;  // one row per PE
  if (what == "bad_column") {
    const mr::sparse_matrix a(rows, 5, {0, 2}, {1, 9});
  } else if (what == "duplicate_column") {
    const mr::sparse_matrix a(rows, 5, {0, 3}, {2, 0, 2});
  } else if (what == "bad_row_ptr") {
    const mr::sparse_matrix a(rows, 5, {0, 1, 1}, {0});
  } else if (what == "not_a_permutation") {
    const auto a = mr::erdos_renyi(2 * rows, 1, 1);
    const auto b =
        mr::permute(a, std::vector<std::int64_t>(2, 0), mr::random_permutation(2 * rows, 1));
    (void)b;
  } else if (what == "read_malformed") {
    (void)mr::matrix_market::read(std::string(MAILROOM_MTX_DIR) + "/bad_duplicate.mtx");
  } else if (what == "read_missing") {
    (void)mr::matrix_market::read("/nonexistent/missing.mtx");
  } else {
    std::printf("unknown misuse '%s'\n", what.c_str());
    return 2;
  }
  mr::barrier();
  return 0;  // not reached when the mistake is caught
}

}  // namespace

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  if (argc > 1) return misuse(argv[1]);
  struct named {
    const char* name;
    int (*run)();
  };
  const named checks[] = {
      {"constructor_sorts_rows_and_carries_values", constructor_sorts_rows_and_carries_values},
      {"gather_scatter_round_trip", gather_scatter_round_trip},
      {"generators_equal_their_serial_references", generators_equal_their_serial_references},
      {"fingerprints_are_the_same_at_every_pe_count", fingerprints_are_the_same_at_every_pe_count},
      {"erdos_renyi_statistics", erdos_renyi_statistics},
      {"kronecker_triangles_match_brute_force", kronecker_triangles_match_brute_force},
      {"random_permutation_is_uniform", random_permutation_is_uniform},
      {"permuted_upper_triangular_is_permuted_unit_upper",
       permuted_upper_triangular_is_permuted_unit_upper},
      {"permute_and_transpose_references", permute_and_transpose_references},
      {"matrix_market_read_write_round_trip", matrix_market_read_write_round_trip}};
  int failed = 0;
  for (const auto& c : checks) {
    const double t0 = mr::wtime();
    const std::int64_t f = sum_over_pes(c.run());
    const double t = mr::wtime() - t0;
    if (g_me == 0) std::printf("%-50s %s  %.2f s\n", c.name, f == 0 ? "PASSED" : "FAILED", t);
    std::fflush(stdout);
    failed += f != 0;
  }
  return failed == 0 ? 0 : 1;
}
