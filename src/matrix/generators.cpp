// SPDX-License-Identifier: MIT
// Deterministic generators (random graphs, Kronecker products of stars, permutations) and the
// permute/transpose references. Every generated row, key or permutation comes from a pure
// function of (seed, index), so the collective results do not depend on the number of PEs and the
// serial references share the very same code.
#include "mailroom/generators.hpp"

#include "mailroom/collectives.hpp"
#include "mailroom/error.hpp"
#include "mailroom/runtime.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <numeric>
#include <span>
#include <utility>

namespace mailroom {

namespace {

// ---- randomness: counter-based streams ----------------------------------------------------------

constexpr std::uint64_t golden = 0x9e3779b97f4a7c15ull;

// The splitmix64 finaliser: a bijective mix of 64 bits.
constexpr std::uint64_t mix(std::uint64_t z) noexcept {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Unrelated streams for the different uses of one seed.
enum class purpose : std::uint64_t {
  edges = 1,
  permutation_keys,
  upper_entries,
  row_permutation,
  col_permutation
};

constexpr std::uint64_t hash(std::uint64_t seed, purpose use, std::uint64_t index) noexcept {
  return mix(mix(mix(seed + golden) + static_cast<std::uint64_t>(use) * golden) + index * golden);
}

// splitmix64 from a starting point that depends on (seed, purpose, index) only.
class stream {
 public:
  stream(std::uint64_t seed, purpose use, std::uint64_t index) noexcept
      : state_(hash(seed, use, index)) {}
  std::uint64_t next() noexcept { return mix(state_ += golden); }
  /// Uniform in [0, 1).
  double uniform() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  std::uint64_t state_;
};

// ---- building matrices row by row ---------------------------------------------------------------

// The rows this PE owns, each made by row(global_row, out) appending its sorted columns.
template <class RowFn>
sparse_matrix build_local(std::int64_t rows, std::int64_t cols, RowFn&& row) {
  const int me = this_pe().rank(), pes = num_pes();
  const std::int64_t lrows = sparse_matrix::local_rows(rows, me, pes);
  std::vector<std::int64_t> row_ptr{0}, col_idx;
  row_ptr.reserve(static_cast<std::size_t>(lrows) + 1);
  for (std::int64_t l = 0; l < lrows; ++l) {
    row(l * pes + me, col_idx);
    row_ptr.push_back(static_cast<std::int64_t>(col_idx.size()));
  }
  return sparse_matrix(rows, cols, std::move(row_ptr), std::move(col_idx));
}

// The same rows, all of them, on the calling PE.
template <class RowFn>
sparse_matrix::serial build_serial(std::int64_t rows, std::int64_t cols, RowFn&& row) {
  sparse_matrix::serial m;
  m.rows = rows;
  m.cols = cols;
  m.row_ptr.reserve(static_cast<std::size_t>(rows) + 1);
  m.row_ptr.push_back(0);
  for (std::int64_t r = 0; r < rows; ++r) {
    row(r, m.col_idx);
    m.row_ptr.push_back(static_cast<std::int64_t>(m.col_idx.size()));
  }
  return m;
}

// ---- Erdős–Rényi rows ---------------------------------------------------------------------------

void check_random_matrix_args(const char* call, std::int64_t n, double nnz_per_row) {
  MAILROOM_CHECK(n >= 0, "{}: n = {} must not be negative", call, n);
  MAILROOM_CHECK(std::isfinite(nnz_per_row) && nnz_per_row >= 0,
                 "{}: nnz_per_row = {} must be finite and not negative", call, nnz_per_row);
}

// Appends, in increasing order, the columns of row i whose entries a Bernoulli(p) trial per
// candidate position selects. Candidates: every j != i (full), j < i (lower) or j > i (upper).
// Geometric gap skipping: the distance to the next selected candidate is 1 + floor(log(1-u) /
// log(1-p)), so the cost is per entry, not per candidate.
void erdos_renyi_row(std::int64_t n, double p, std::uint64_t seed, purpose use, triangle shape,
                     std::int64_t i, std::vector<std::int64_t>& out) {
  const std::int64_t candidates = shape == triangle::full    ? n - 1
                                  : shape == triangle::lower ? i
                                                             : n - 1 - i;
  const auto column = [&](std::int64_t k) {
    switch (shape) {
      case triangle::full:
        return k < i ? k : k + 1;
      case triangle::lower:
        return k;
      case triangle::upper:
        break;
    }
    return i + 1 + k;
  };
  if (candidates <= 0 || p <= 0) return;
  if (p >= 1) {
    for (std::int64_t k = 0; k < candidates; ++k) out.push_back(column(k));
    return;
  }
  stream rng(seed, use, static_cast<std::uint64_t>(i));
  const double log_q = std::log1p(-p);
  for (std::int64_t k = -1;;) {
    const double gap = std::floor(std::log1p(-rng.uniform()) / log_q);
    if (gap >= static_cast<double>(candidates - 1 - k)) break;  // k + 1 + gap >= candidates
    k += 1 + static_cast<std::int64_t>(gap);
    out.push_back(column(k));
  }
}

double erdos_renyi_p(std::int64_t n, double nnz_per_row) {
  return n > 0 ? std::min(1.0, nnz_per_row / static_cast<double>(n)) : 0.0;
}

// ---- Kronecker products of stars ----------------------------------------------------------------

struct star_product {
  std::vector<std::int64_t> radix;   // m + 1 per star
  std::vector<std::int64_t> weight;  // place value of each star's digit; the first is the largest
  std::int64_t n = 1;
};

star_product make_star_product(const std::vector<std::int64_t>& stars, const char* call) {
  star_product k;
  for (std::size_t s = 0; s < stars.size(); ++s) {
    MAILROOM_CHECK(stars[s] >= 0, "{}: star {} has m = {}; K_{{1,m}} needs m >= 0", call, s,
                   stars[s]);
    MAILROOM_CHECK(stars[s] < INT64_MAX && !__builtin_mul_overflow(k.n, stars[s] + 1, &k.n),
                   "{}: the product of the stars has more than 2^63 vertices", call);
    k.radix.push_back(stars[s] + 1);
  }
  k.weight.assign(stars.size(), 1);
  for (std::size_t s = stars.size(); s-- > 1;) k.weight[s - 1] = k.weight[s] * k.radix[s];
  return k;
}

// Appends the neighbours u < v of vertex v, in increasing order. In a star with a loop at the
// centre, the centre (digit 0) is adjacent to every digit and a leaf to the centre only; so the
// neighbours of v have digit 0 wherever v has a leaf digit, any digit where v has the centre.
void kronecker_row(const star_product& k, std::int64_t v, std::vector<std::int64_t>& out) {
  std::vector<std::size_t> free;  // stars where v is at the centre, most significant first
  std::int64_t rest = v;
  for (std::size_t s = 0; s < k.radix.size(); ++s) {
    if (rest / k.weight[s] == 0) free.push_back(s);
    rest %= k.weight[s];
  }
  // An odometer over the free digits counts the neighbours in increasing order.
  std::vector<std::int64_t> digit(free.size(), 0);
  for (std::int64_t u = 0; u < v;) {
    out.push_back(u);
    bool advanced = false;
    for (std::size_t f = free.size(); f-- > 0 && !advanced;) {
      const std::size_t s = free[f];
      if (digit[f] + 1 < k.radix[s]) {
        ++digit[f];
        u += k.weight[s];
        advanced = true;
      } else {
        u -= digit[f] * k.weight[s];
        digit[f] = 0;
      }
    }
    if (!advanced) break;  // every combination done
  }
}

// ---- all-to-all exchanges (for the distributed permutation and matrix references) ---------------

// Sends items[k] to PE dest(items[k]); returns what this PE received, grouped by source PE in PE
// order, each group in its sender's order.
template <class T, class Dest>
std::vector<T> exchange(const std::vector<T>& items, Dest&& dest, const char* call) {
  const int pes = num_pes();
  std::vector<std::int64_t> count(static_cast<std::size_t>(pes), 0);
  std::vector<int> to(items.size());
  for (std::size_t k = 0; k < items.size(); ++k) {
    to[k] = dest(items[k]);
    ++count[static_cast<std::size_t>(to[k])];
  }
  std::vector<int> send_counts(count.size()), send_displs(count.size()), recv_counts(count.size()),
      recv_displs(count.size());
  for (std::size_t p = 0; p < count.size(); ++p) {
    MAILROOM_CHECK(count[p] <= INT_MAX, "{}: {} items for one PE exceed an MPI count", call,
                   count[p]);
    send_counts[p] = static_cast<int>(count[p]);
  }
  std::exclusive_scan(send_counts.begin(), send_counts.end(), send_displs.begin(), 0);
  std::vector<T> send(items.size());
  std::vector<int> at = send_displs;
  for (std::size_t k = 0; k < items.size(); ++k)
    send[static_cast<std::size_t>(at[static_cast<std::size_t>(to[k])]++)] = items[k];
  recv_counts = all_to_all(std::span<const int>(send_counts));
  std::int64_t total = 0;
  for (std::size_t p = 0; p < count.size(); ++p) {
    MAILROOM_CHECK(total + recv_counts[p] <= INT_MAX, "{}: more than {} items arrive at one PE",
                   call, INT_MAX);
    recv_displs[p] = static_cast<int>(total);
    total += recv_counts[p];
  }
  std::vector<T> recv(static_cast<std::size_t>(total));
  all_to_all_v(std::span<const T>(send), std::span<const int>(send_counts),
               std::span<const int>(send_displs), std::span<T>(recv),
               std::span<const int>(recv_counts), std::span<const int>(recv_displs));
  return recv;
}

// Checks that `perm` (this PE's cyclic share) holds a permutation of 0..n-1: every value in
// range, and every value held exactly once (each value is sent to the PE that owns it as an
// index). Collective.
void check_permutation(const std::vector<std::int64_t>& perm, std::int64_t n, const char* call,
                       const char* name) {
  const int me = this_pe().rank(), pes = num_pes();
  MAILROOM_CHECK(static_cast<std::int64_t>(perm.size()) == sparse_matrix::local_rows(n, me, pes),
                 "{}: this PE holds {} entries of {}, expected {} (its cyclic share of {})", call,
                 perm.size(), name, sparse_matrix::local_rows(n, me, pes), n);
  for (std::size_t l = 0; l < perm.size(); ++l)
    MAILROOM_CHECK(perm[l] >= 0 && perm[l] < n,
                   "{}: {}[{}] = {} is out of range [0, {}): not a permutation", call, name,
                   static_cast<std::int64_t>(l) * pes + me, perm[l], n);
  const auto got = exchange(
      perm, [pes](std::int64_t v) { return static_cast<int>(v % pes); }, call);
  std::vector<char> seen(perm.size(), 0);
  for (std::int64_t v : got) {
    auto& s = seen[static_cast<std::size_t>(v / pes)];
    MAILROOM_CHECK(s == 0, "{}: {} holds the value {} more than once: not a permutation", call,
                   name, v);
    s = 1;
  }
}

// For each global index in `index`, the element of the cyclically distributed array `array`
// (this PE's share) at that index. Collective.
std::vector<std::int64_t> fetch(const std::vector<std::int64_t>& array,
                                const std::vector<std::int64_t>& index, const char* call) {
  const int me = this_pe().rank(), pes = num_pes();
  // A request names its asker and its position there; the reply is the request sent back with
  // the element in place of the index.
  struct request {
    std::int64_t index, position;
    int asker;
  };
  std::vector<request> requests(index.size());
  for (std::size_t k = 0; k < index.size(); ++k)
    requests[k] = {index[k], static_cast<std::int64_t>(k), me};
  auto replies = exchange(
      requests, [pes](const request& r) { return static_cast<int>(r.index % pes); }, call);
  for (auto& r : replies) r.index = array[static_cast<std::size_t>(r.index / pes)];
  const auto answers = exchange(
      replies, [](const request& r) { return r.asker; }, call);
  std::vector<std::int64_t> out(index.size());
  for (const auto& a : answers) out[static_cast<std::size_t>(a.position)] = a.index;
  return out;
}

// One nonzero on its way to the PE that owns its row.
struct entry {
  std::int64_t row, col;
  double value;
};

// CSR arrays of `entries`, sorted by row then column; slot(row) is the row's index among `slots`.
struct csr {
  std::vector<std::int64_t> row_ptr, col_idx;
  std::vector<double> values;
};

template <class Slot>
csr to_csr(std::vector<entry> entries, std::int64_t slots, bool values, Slot&& slot) {
  std::sort(entries.begin(), entries.end(), [](const entry& a, const entry& b) {
    return a.row != b.row ? a.row < b.row : a.col < b.col;
  });
  csr c;
  c.row_ptr.assign(static_cast<std::size_t>(slots) + 1, 0);
  c.col_idx.reserve(entries.size());
  if (values) c.values.reserve(entries.size());
  for (const auto& e : entries) {
    ++c.row_ptr[static_cast<std::size_t>(slot(e.row)) + 1];
    c.col_idx.push_back(e.col);
    if (values) c.values.push_back(e.value);
  }
  std::partial_sum(c.row_ptr.begin(), c.row_ptr.end(), c.row_ptr.begin());
  return c;
}

// The matrix made of `entries`, all in rows this PE owns.
sparse_matrix assemble(std::int64_t rows, std::int64_t cols, std::vector<entry> entries,
                       bool values) {
  const int pes = num_pes();
  auto c = to_csr(std::move(entries), sparse_matrix::local_rows(rows, this_pe().rank(), pes),
                  values, [pes](std::int64_t row) { return row / pes; });
  return sparse_matrix(rows, cols, std::move(c.row_ptr), std::move(c.col_idx), std::move(c.values));
}

// The same on one PE: every row.
sparse_matrix::serial assemble_serial(std::int64_t rows, std::int64_t cols,
                                      std::vector<entry> entries, bool values) {
  auto c = to_csr(std::move(entries), rows, values, [](std::int64_t row) { return row; });
  return {rows, cols, std::move(c.row_ptr), std::move(c.col_idx), std::move(c.values)};
}

void check_serial_permutation(const std::vector<std::int64_t>& perm, std::int64_t n,
                              const char* call, const char* name) {
  MAILROOM_CHECK(static_cast<std::int64_t>(perm.size()) == n, "{}: {} has {} entries, expected {}",
                 call, name, perm.size(), n);
  std::vector<char> seen(perm.size(), 0);
  for (std::size_t i = 0; i < perm.size(); ++i) {
    MAILROOM_CHECK(perm[i] >= 0 && perm[i] < n && seen[static_cast<std::size_t>(perm[i])] == 0,
                   "{}: {}[{}] = {} is out of range or repeated: not a permutation of 0..{}", call,
                   name, i, perm[i], n - 1);
    seen[static_cast<std::size_t>(perm[i])] = 1;
  }
}

// ---- the toposort input -------------------------------------------------------------------------

struct upper_params {
  double p;
  std::uint64_t entries_seed, row_seed, col_seed;
};

upper_params make_upper_params(std::int64_t n, double nnz_per_row, std::uint64_t seed) {
  check_random_matrix_args("permuted_upper_triangular", n, nnz_per_row);
  const double p =
      n > 1 ? std::clamp(2 * (nnz_per_row - 1) / static_cast<double>(n - 1), 0.0, 1.0) : 0.0;
  return {p, hash(seed, purpose::upper_entries, 0), hash(seed, purpose::row_permutation, 0),
          hash(seed, purpose::col_permutation, 0)};
}

void unit_upper_row(std::int64_t n, const upper_params& u, std::int64_t i,
                    std::vector<std::int64_t>& out) {
  out.push_back(i);
  erdos_renyi_row(n, u.p, u.entries_seed, purpose::edges, triangle::upper, i, out);
}

}  // namespace

// ---- collective generators ----------------------------------------------------------------------

sparse_matrix erdos_renyi(std::int64_t n, double nnz_per_row, std::uint64_t seed, triangle shape) {
  check_random_matrix_args("erdos_renyi", n, nnz_per_row);
  const double p = erdos_renyi_p(n, nnz_per_row);
  return build_local(n, n, [&](std::int64_t i, std::vector<std::int64_t>& out) {
    erdos_renyi_row(n, p, seed, purpose::edges, shape, i, out);
  });
}

sparse_matrix kronecker_stars(const std::vector<std::int64_t>& stars) {
  const auto k = make_star_product(stars, "kronecker_stars");
  return build_local(
      k.n, k.n, [&](std::int64_t v, std::vector<std::int64_t>& out) { kronecker_row(k, v, out); });
}

std::int64_t kronecker_stars_triangles(const std::vector<std::int64_t>& stars) {
  (void)make_star_product(stars, "kronecker_stars_triangles");  // the same argument checks
  __extension__ using wide = __int128;
  wide cubes = 1, vertices = 1;  // prod(3m + 1) = trace(A^3) with the loops, prod(m + 1) = n
  for (std::int64_t m : stars) {
    MAILROOM_CHECK(!__builtin_mul_overflow(cubes, 3 * static_cast<wide>(m) + 1, &cubes),
                   "kronecker_stars_triangles: the triangle count overflows 128 bits");
    vertices *= m + 1;
  }
  const wide triangles = (cubes - 3 * vertices + 2) / 6;
  MAILROOM_CHECK(triangles <= INT64_MAX,
                 "kronecker_stars_triangles: the triangle count does not fit in 64 bits");
  return static_cast<std::int64_t>(triangles);
}

std::vector<std::int64_t> random_permutation(std::int64_t n, std::uint64_t seed) {
  MAILROOM_CHECK(n >= 0, "random_permutation: n = {} must not be negative", n);
  const int me = this_pe().rank(), pes = num_pes();
  // Every value gets a random key; the permutation lists the values by (key, value). Keys split
  // evenly into P ranges, one per PE, so that PE p sorts the p-th part of the order.
  struct keyed {
    std::uint64_t key;
    std::int64_t value;
  };
  std::vector<keyed> mine(static_cast<std::size_t>(sparse_matrix::local_rows(n, me, pes)));
  for (std::size_t l = 0; l < mine.size(); ++l) {
    const auto v = static_cast<std::int64_t>(l) * pes + me;
    mine[l] = {hash(seed, purpose::permutation_keys, static_cast<std::uint64_t>(v)), v};
  }
  auto part = exchange(
      mine,
      [pes](const keyed& k) {
        return static_cast<int>(((k.key >> 32) * static_cast<std::uint64_t>(pes)) >> 32);
      },
      "random_permutation");
  std::sort(part.begin(), part.end(), [](const keyed& a, const keyed& b) {
    return a.key != b.key ? a.key < b.key : a.value < b.value;
  });
  // Position of each value in the order, then to the PE that owns that position.
  const std::int64_t first =
      exclusive_scan(static_cast<std::int64_t>(part.size()), std::int64_t{0}, plus<>{});
  struct placed {
    std::int64_t position, value;
  };
  std::vector<placed> out(part.size());
  for (std::size_t k = 0; k < part.size(); ++k)
    out[k] = {first + static_cast<std::int64_t>(k), part[k].value};
  const auto got = exchange(
      out, [pes](const placed& p) { return static_cast<int>(p.position % pes); },
      "random_permutation");
  std::vector<std::int64_t> perm(mine.size());
  for (const auto& p : got) perm[static_cast<std::size_t>(p.position / pes)] = p.value;
  return perm;
}

sparse_matrix permuted_upper_triangular(std::int64_t n, double nnz_per_row, std::uint64_t seed) {
  const auto u = make_upper_params(n, nnz_per_row, seed);
  const auto upper = build_local(
      n, n, [&](std::int64_t i, std::vector<std::int64_t>& out) { unit_upper_row(n, u, i, out); });
  return permute(upper, random_permutation(n, u.row_seed), random_permutation(n, u.col_seed));
}

sparse_matrix permute(const sparse_matrix& a, const std::vector<std::int64_t>& row_perm,
                      const std::vector<std::int64_t>& col_perm) {
  const int pes = num_pes();
  check_permutation(row_perm, a.rows(), "permute", "row_perm");
  check_permutation(col_perm, a.cols(), "permute", "col_perm");
  const bool values = all_reduce(a.has_values() ? 1 : 0, max<>{}) == 1;
  const auto new_cols = fetch(col_perm, a.col_idx(), "permute");
  std::vector<entry> moved(a.col_idx().size());
  for (std::int64_t l = 0; l < a.local_rows(); ++l) {
    const auto begin = static_cast<std::size_t>(a.row_ptr()[static_cast<std::size_t>(l)]);
    const auto end = static_cast<std::size_t>(a.row_ptr()[static_cast<std::size_t>(l) + 1]);
    for (std::size_t k = begin; k < end; ++k)
      moved[k] = {row_perm[static_cast<std::size_t>(l)], new_cols[k],
                  a.has_values() ? a.values()[k] : 0.0};
  }
  auto mine = exchange(
      moved, [pes](const entry& e) { return static_cast<int>(e.row % pes); }, "permute");
  return assemble(a.rows(), a.cols(), std::move(mine), values);
}

sparse_matrix transpose(const sparse_matrix& a) {
  const int pes = num_pes();
  const bool values = all_reduce(a.has_values() ? 1 : 0, max<>{}) == 1;
  std::vector<entry> moved;
  moved.reserve(a.col_idx().size());
  for (std::int64_t l = 0; l < a.local_rows(); ++l) {
    const auto cols = a.row(l);
    const auto vals = a.row_values(l);
    for (std::size_t k = 0; k < cols.size(); ++k)
      moved.push_back({cols[k], a.global_row(l), vals.empty() ? 0.0 : vals[k]});
  }
  auto mine = exchange(
      moved, [pes](const entry& e) { return static_cast<int>(e.row % pes); }, "transpose");
  return assemble(a.cols(), a.rows(), std::move(mine), values);
}

// ---- serial references --------------------------------------------------------------------------

namespace reference {

sparse_matrix::serial erdos_renyi(std::int64_t n, double nnz_per_row, std::uint64_t seed,
                                  triangle shape) {
  check_random_matrix_args("reference::erdos_renyi", n, nnz_per_row);
  const double p = erdos_renyi_p(n, nnz_per_row);
  return build_serial(n, n, [&](std::int64_t i, std::vector<std::int64_t>& out) {
    erdos_renyi_row(n, p, seed, purpose::edges, shape, i, out);
  });
}

sparse_matrix::serial kronecker_stars(const std::vector<std::int64_t>& stars) {
  const auto k = make_star_product(stars, "reference::kronecker_stars");
  return build_serial(
      k.n, k.n, [&](std::int64_t v, std::vector<std::int64_t>& out) { kronecker_row(k, v, out); });
}

std::vector<std::int64_t> random_permutation(std::int64_t n, std::uint64_t seed) {
  MAILROOM_CHECK(n >= 0, "reference::random_permutation: n = {} must not be negative", n);
  std::vector<std::pair<std::uint64_t, std::int64_t>> keyed(static_cast<std::size_t>(n));
  for (std::int64_t v = 0; v < n; ++v)
    keyed[static_cast<std::size_t>(v)] = {
        hash(seed, purpose::permutation_keys, static_cast<std::uint64_t>(v)), v};
  std::sort(keyed.begin(), keyed.end());
  std::vector<std::int64_t> perm(keyed.size());
  for (std::size_t k = 0; k < keyed.size(); ++k) perm[k] = keyed[k].second;
  return perm;
}

sparse_matrix::serial permuted_upper_triangular(std::int64_t n, double nnz_per_row,
                                                std::uint64_t seed) {
  const auto u = make_upper_params(n, nnz_per_row, seed);
  const auto upper = build_serial(
      n, n, [&](std::int64_t i, std::vector<std::int64_t>& out) { unit_upper_row(n, u, i, out); });
  return permute(upper, random_permutation(n, u.row_seed), random_permutation(n, u.col_seed));
}

// Every nonzero A[i][j] of `a` moved to where(i, j), values carried: a rows x cols matrix.
template <class Where>
sparse_matrix::serial move_entries(const sparse_matrix::serial& a, std::int64_t rows,
                                   std::int64_t cols, Where&& where) {
  std::vector<entry> moved;
  moved.reserve(a.col_idx.size());
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (auto k = a.row_ptr[static_cast<std::size_t>(i)];
         k < a.row_ptr[static_cast<std::size_t>(i) + 1]; ++k) {
      const auto u = static_cast<std::size_t>(k);
      const auto [r, c] = where(i, a.col_idx[u]);
      moved.push_back({r, c, a.values.empty() ? 0.0 : a.values[u]});
    }
  return assemble_serial(rows, cols, std::move(moved), !a.values.empty());
}

sparse_matrix::serial permute(const sparse_matrix::serial& a,
                              const std::vector<std::int64_t>& row_perm,
                              const std::vector<std::int64_t>& col_perm) {
  check_serial_permutation(row_perm, a.rows, "reference::permute", "row_perm");
  check_serial_permutation(col_perm, a.cols, "reference::permute", "col_perm");
  return move_entries(a, a.rows, a.cols, [&](std::int64_t i, std::int64_t j) {
    return std::pair{row_perm[static_cast<std::size_t>(i)], col_perm[static_cast<std::size_t>(j)]};
  });
}

sparse_matrix::serial transpose(const sparse_matrix::serial& a) {
  return move_entries(a, a.cols, a.rows, [](std::int64_t i, std::int64_t j) {
    return std::pair{j, i};
  });
}

}  // namespace reference

}  // namespace mailroom
