// SPDX-License-Identifier: MIT
// The stencil mini-app for the driver: the grid's initial values, the variants, and the checker:
// at small sizes every PE computes the whole grid serially and its block must match bit for bit;
// at any size the values must stay within the initial ones' range (Jacobi averages), the boundary
// must keep its values, and a weighted checksum, which does not depend on P, must be the same for
// every variant.
#include "common/driver.hpp"
#include "stencil/stencil.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <limits>
#include <optional>

namespace mailroom::apps {

namespace {

using stencil::problem;

// Grids of at most this many points are checked against a serial computation of the whole.
constexpr std::int64_t k_reference_2d = std::int64_t{1} << 16,
                       k_reference_3d = std::int64_t{1} << 18;

// Whether point g is on the grid's boundary (and so keeps its initial value).
bool on_boundary(const problem& pb, std::int64_t g) {
  const std::int64_t n = pb.n, x = g % n, y = (g / n) % n, z = g / (n * n);
  const auto edge = [n](std::int64_t c) { return c == 0 || c == n - 1; };
  return edge(x) || edge(y) || (pb.dims == 3 && edge(z));
}

// Point g's initial value, the same for every P: on the boundary a smooth function of the
// coordinates in [1, 2.5]; inside, a value in [0, 1) mixed from g and the seed.
double initial(const problem& pb, std::int64_t g, std::uint64_t seed) {
  if (on_boundary(pb, g)) {
    const double s = static_cast<double>(pb.n - 1);
    const double x = static_cast<double>(g % pb.n) / s,
                 y = static_cast<double>(g / pb.n % pb.n) / s,
                 z = static_cast<double>(g / (pb.n * pb.n)) / s;
    return 1 + x * (1 - x) + y * y + (pb.dims == 3 ? z * (1 - z) : 0.0);
  }
  return static_cast<double>(static_cast<std::uint64_t>(mix(static_cast<std::uint64_t>(g), seed)) >>
                             10) *
         0x1.0p-53;
}

// Point g's weight in the checksum, in [1, 2).
double weight(std::int64_t g) {
  return 1 +
         static_cast<double>(mix(static_cast<std::uint64_t>(g), 0x57e9c11) & 0xfffff) * 0x1.0p-20;
}

class stencil_bench final : public kernel_bench {
 public:
  void prepare(const sizes& s) override {
    const int P = num_pes(), me = this_pe().rank();
    const std::int64_t dims = s.options.at("dims");
    if (dims != 2 && dims != 3)
      usage_error(fmt::format("stencil: --dims {} (2: N x N points, 3: N^3)", dims));
    pb_.dims = static_cast<int>(dims);
    pb_.iterations = s.options.at("iterations");
    if (pb_.iterations < 1) usage_error("stencil: --iterations must be at least 1");
    pb_.n = s.n;
    if (pb_.n < 3)
      usage_error(fmt::format("stencil: -n {}: a grid has interior points from 3 on", s.n));
    seed_ = s.seed;
    pb_.rows = pb_.n;
    pb_.width = pb_.dims == 2 ? pb_.n : pb_.n * pb_.n;
    // Refuse grids this machine cannot hold before allocating them.
    const block rows(pb_.rows, P);
    const double points = static_cast<double>(pb_.rows) * static_cast<double>(pb_.width);
    const double part =
        16.0 * static_cast<double>(rows.block_size()) * static_cast<double>(pb_.width);
    const double heap = static_cast<double>(current_config().symmetric_heap_bytes);
    const double have = physical_memory_bytes();
    const double per_node = part * std::ceil(static_cast<double>(P) / num_nodes());
    if (part > heap || per_node > have || pb_.width > INT_MAX)
      usage_error(fmt::format(
          "stencil: -n {} with --dims {}: {:.3g} points, two grids of {:.1f} GiB per PE (the "
          "symmetric heap holds {:.1f} GiB, MAILROOM_SYMMETRIC_HEAP_BYTES; this machine {:.1f} "
          "GiB){}",
          pb_.n, pb_.dims, points, part / (1 << 30), heap / (1 << 30), have / (1 << 30),
          pb_.dims == 3 ? "; -n is the side in 3-D too: try -n 256" : ""));
    pb_.first = std::min<std::int64_t>(pb_.rows, me * rows.block_size());
    pb_.count = static_cast<std::int64_t>(rows.local_size(pe(me)));
    const stencil::row_block d(pb_.rows, pb_.width);
    a_.emplace(d);
    b_.emplace(d);
    const auto row_of = [&](std::int64_t r) {
      std::vector<double> v(static_cast<std::size_t>(pb_.width));
      for (std::int64_t c = 0; c < pb_.width; ++c)
        v[static_cast<std::size_t>(c)] = initial(pb_, r * pb_.width + c, seed_);
      return v;
    };
    if (pb_.has_above()) pb_.fixed_above = row_of(pb_.first - 1);
    if (pb_.has_below()) pb_.fixed_below = row_of(pb_.first + pb_.count);
    // The range every value stays in: Jacobi's averages never leave that of the initial values
    // (but for rounding: a sum of 6 values near the largest may round up by an ulp or so).
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (std::int64_t l = 0; l < pb_.count * pb_.width; ++l) {
      const double v = initial(pb_, pb_.first * pb_.width + l, seed_);
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    lo_ = all_reduce(lo, min<>{}) - 1e-9;
    hi_ = all_reduce(hi, max<>{}) + 1e-9;
    if (points <= static_cast<double>(pb_.dims == 2 ? k_reference_2d : k_reference_3d))
      compute_references();
  }
  // Both grids hold the initial values (the boundary's stay in both).
  void reset() override {
    const std::span<double> a = a_->local(), b = b_->local();
    for (std::size_t l = 0; l < a.size(); ++l)
      a[l] = initial(pb_, pb_.first * pb_.width + static_cast<std::int64_t>(l), seed_);
    std::copy(a.begin(), a.end(), b.begin());
  }
  void run(std::string_view v) override {
    if (v == "global")
      stencil::global(pb_, *a_, *b_);
    else if (v == "selector")
      stencil::selector(pb_, *a_, *b_);
    else if (v == "mpi")
      stencil::mpi(pb_, *a_, *b_);
    else if (v == "local")
      stencil::local(pb_, *a_, *b_);
  }
  [[nodiscard]] std::string unavailable(std::string_view v) const override {
    if (v == "mpi" && simulated())
      return "it calls MPI itself, and the simulated machine's PEs are no MPI job";
    return {};
  }
  bool check(std::string_view v) override {
    const bool local = v == "local";
    const std::span<const double> out = (pb_.iterations % 2 == 0 ? *a_ : *b_).local();
    std::int64_t wrong = 0;
    // Exactly the serial computation's values, at small sizes.
    const std::vector<double>& want = local ? ref_local_ : ref_global_;
    if (!want.empty())
      for (std::size_t l = 0; l < out.size(); ++l) wrong += out[l] != want[l];
    // Within the initial values' range (NaN is not), and the boundary unchanged.
    for (std::size_t l = 0; l < out.size(); ++l) {
      const std::int64_t g = pb_.first * pb_.width + static_cast<std::int64_t>(l);
      wrong += !(out[l] >= lo_ && out[l] <= hi_);
      if (on_boundary(pb_, g)) wrong += out[l] != initial(pb_, g, seed_);
    }
    wrong = all_reduce(wrong);
    checksum_ = checksum(out);
    // The checksum of the first variant to pass; the others (every repetition of local) must
    // give it bit for bit: every point is computed in the same order everywhere.
    std::optional<double>& first = local ? local_checksum_ : checksum_all_;
    if (wrong == 0 && !first) first = checksum_;
    return wrong == 0 &&
           std::bit_cast<std::uint64_t>(*first) == std::bit_cast<std::uint64_t>(checksum_);
  }
  // Points updated per iteration (the interior's, of this PE's rows), times the iterations.
  [[nodiscard]] std::int64_t ops_per_pe() const override {
    const std::int64_t lo = std::max<std::int64_t>(pb_.first, 1);
    const std::int64_t hi = std::min(pb_.first + pb_.count, pb_.rows - 1);
    const std::int64_t per_row = pb_.dims == 2 ? pb_.n - 2 : (pb_.n - 2) * (pb_.n - 2);
    return std::max<std::int64_t>(hi - lo, 0) * per_row * pb_.iterations;
  }
  [[nodiscard]] std::string result() const override {
    return fmt::format("checksum {:.17g}", checksum_);
  }

 private:
  // Collective: the sum over all points of value x weight, each row summed on its owner, the
  // rows' sums then added in row order on every PE: the same for any P.
  double checksum(std::span<const double> out) const {
    const block rows(pb_.rows, num_pes());
    std::vector<double> sums(static_cast<std::size_t>(rows.block_size()), 0.0);
    for (std::int64_t l = 0; l < pb_.count; ++l) {
      double s = 0;
      for (std::int64_t c = 0; c < pb_.width; ++c) {
        const std::int64_t k = l * pb_.width + c;
        s += out[static_cast<std::size_t>(k)] * weight(pb_.first * pb_.width + k);
      }
      sums[static_cast<std::size_t>(l)] = s;
    }
    const std::vector<double> all = all_gather(std::span<const double>(sums));
    double total = 0;
    for (std::int64_t r = 0; r < pb_.rows; ++r) total += all[static_cast<std::size_t>(r)];
    return total;
  }
  // The serial computations the checker compares with: the whole grid's (this PE's rows kept),
  // and this PE's block alone with the rows next to it fixed (the local variant's).
  void compute_references() {
    const std::int64_t w = pb_.width;
    const auto at = [w](std::vector<double>& v, std::int64_t row) { return v.data() + row * w; };
    std::vector<double> u(static_cast<std::size_t>(pb_.rows * w)), next;
    for (std::int64_t g = 0; g < pb_.rows * w; ++g)
      u[static_cast<std::size_t>(g)] = initial(pb_, g, seed_);
    next = u;
    for (std::int64_t it = 0; it < pb_.iterations; ++it) {
      for (std::int64_t r = 1; r < pb_.rows - 1; ++r)
        stencil::update_row(pb_, at(u, r - 1), at(u, r), at(u, r + 1), at(next, r));
      std::swap(u, next);
    }
    ref_global_.assign(u.begin() + pb_.first * w, u.begin() + (pb_.first + pb_.count) * w);
    // This PE's block alone, by the local variant's sweep over copies of its initial values.
    std::vector<double> mine(static_cast<std::size_t>(pb_.count * w));
    for (std::int64_t l = 0; l < pb_.count * w; ++l)
      mine[static_cast<std::size_t>(l)] = initial(pb_, pb_.first * w + l, seed_);
    std::vector<double> mine_next = mine;
    for (std::int64_t it = 0; it < pb_.iterations; ++it) {
      stencil::sweep(pb_, mine.data(), mine_next.data(), 0, pb_.count, pb_.fixed_above.data(),
                     pb_.fixed_below.data());
      std::swap(mine, mine_next);
    }
    ref_local_ = std::move(mine);
  }

  problem pb_;
  std::uint64_t seed_ = 1;
  std::optional<stencil::grid> a_, b_;
  std::vector<double> ref_global_, ref_local_;  // empty: too large to compute serially
  double lo_ = 0, hi_ = 0;
  double checksum_ = 0;
  std::optional<double> checksum_all_, local_checksum_;
};

}  // namespace

app_info stencil_app() {
  app_info app{"stencil",
               "K Jacobi iterations of the 5-point stencil on an N x N grid (7-point on N^3 with "
               "--dims 3), fixed boundary, rows in blocks over the PEs: halos every iteration",
               "point",
               4096,
               0,
               64,
               0,
               {"global", "selector", "mpi", "local"},
               [] { return std::make_unique<stencil_bench>(); }};
  app.n_means = "the grid's side N";
  app.n_help =
      "the grid's side N: N x N points, or N^3 with --dims 3 (where the default is too large: "
      "pass -n, e.g. 256); default 4096";
  app.baseline = "mpi";
  app.options = {
      {"dims", "2: the 5-point stencil on N x N points; 3: the 7-point one on N^3", 2, 2},
      {"iterations", "Jacobi iterations K", 50, 5}};
  app.local_floor =
      "the same sweeps of this PE's block with no communication, the rows next to it kept at "
      "their initial values";
  return app;
}

}  // namespace mailroom::apps
