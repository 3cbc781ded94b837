// SPDX-License-Identifier: MIT
// The Barnes-Hut mini-app for the driver: a Plummer model of n bodies (each body from its own
// stream of (seed, index), so the input does not depend on P), the variants, and the checker: the
// accelerations against a direct sum (every body's at small n, a sample's up to a million bodies)
// within a bound, and the positions after the steps the same bits for every variant.
#include "barnes_hut/barnes_hut.hpp"
#include "common/checksum.hpp"
#include "common/driver.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <numbers>
#include <optional>

namespace mailroom::apps {

namespace {

using barnes_hut::particle;
using barnes_hut::problem;
using barnes_hut::vec3;

// Up to this many bodies every body's acceleration is checked against the direct sum; up to
// k_sampled_check, about k_samples of each PE's (the direct sums need every body's position on
// every PE); beyond, only that the variants agree.
constexpr std::int64_t k_full_check = 4096, k_sampled_check = std::int64_t{1} << 20;
constexpr std::int64_t k_samples = 128;

// The errors |a - a_direct| / |a_direct| of the bodies' accelerations that pass: the largest and
// the root mean square. Barnes-Hut with monopoles at theta = 0.5 errs by a few 1e-3 rms; its
// largest errors are those of bodies whose pulls nearly cancel (|a| small, near the centre). In
// the Plummer models measured (1,000 to 4,096 bodies, seeds 1-5, 1 to 4 PEs; 100,000 sampled) at
// theta 0.5: at most 9.4e-2, rms at most 4.6e-3 (both the local floor's, against its own bodies'
// sum; over every body at most 8e-2 and 3.4e-3). The bounds leave a margin of 2.7 and 2.2 and
// scale with theta^2 (the monopole's first neglected term, the quadrupole's, relative to the
// pull; measured at 0.3, 0.7 and 1 too): a tree left out, or a cell or a body read wrong, gives
// errors of order 1 (the local floor's accelerations against every body's sum: 5.8, rms 0.59).
// At theta 0 (every cell opened: a direct sum in another order) only rounding.
struct error_bounds {
  double max, rms;
};
error_bounds bounds_at(double theta) {
  return {std::max(1e-9, theta * theta), std::max(1e-9, 0.04 * theta * theta)};
}

// A body's stream: splitmix64 from a state that mixes the seed and the body's index.
class body_stream {
 public:
  body_stream(std::uint64_t seed, std::int64_t i)
      : s_(static_cast<std::uint64_t>(mix(static_cast<std::uint64_t>(i), seed))) {}
  // Uniform in [0, 1).
  double uniform() {
    std::uint64_t z = s_ += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return static_cast<double>((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
  }
  // A vector of length len in a uniformly random direction.
  vec3 direction(double len) {
    const double z = (1 - 2 * uniform()) * len;
    const double xy = std::sqrt(std::max(0.0, len * len - z * z));
    const double phi = 2 * std::numbers::pi * uniform();
    return {xy * std::cos(phi), xy * std::sin(phi), z};
  }

 private:
  std::uint64_t s_;
};

// Body i of the Plummer model (Aarseth, Hénon & Wielen 1974) in N-body units (G = M = 1,
// E = -1/4), its centre of mass left where the sampling puts it (near 0).
particle plummer(std::uint64_t seed, std::int64_t i) {
  body_stream r(seed, i);
  // The radius that holds a uniform fraction of the mass, m(r) = r^3 / (1 + r^2)^(3/2) (scale
  // length 1), the last 0.1% cut as in Hut & Makino's mkplummer: no body absurdly far out.
  double m = 0;
  while (m == 0) m = 0.999 * r.uniform();
  const double radius = 1 / std::sqrt(std::pow(m, -2.0 / 3.0) - 1);
  // The speed as a fraction q of the escape speed, of density g(q) = q^2 (1 - q^2)^(7/2): von
  // Neumann's rejection under 0.1 (g's maximum is 0.092).
  double q = 0;
  for (;;) {
    q = r.uniform();
    if (0.1 * r.uniform() < q * q * std::pow(1 - q * q, 3.5)) break;
  }
  const double speed = q * std::numbers::sqrt2 * std::pow(1 + radius * radius, -0.25);
  constexpr double length = 3 * std::numbers::pi / 16;  // the virial radius is 1 in N-body units
  const vec3 x = r.direction(radius * length);
  const vec3 v = r.direction(speed / std::sqrt(length));
  return {x.x, x.y, x.z, v.x, v.y, v.z, i, 0};
}

// A source of the direct sum: a body's position at the force computation, and its index (-1: a
// padding entry, no body).
struct source {
  double x, y, z;
  std::int64_t id;
};

// How far a variant's accelerations are from the direct sums.
struct errors {
  double max = 0, sum2 = 0;  // the largest relative error, and the sum of the squares
  std::int64_t count = 0;    // bodies compared
  [[nodiscard]] double rms() const {
    return count > 0 ? std::sqrt(sum2 / static_cast<double>(count)) : 0.0;
  }
};

class barnes_hut_bench final : public kernel_bench {
 public:
  void prepare(const sizes& s) override {
    const int P = num_pes(), me = this_pe().rank();
    if (s.n < 2) usage_error(fmt::format("barnes-hut: -n {}: at least 2 bodies", s.n));
    const std::int64_t theta = s.options.at("theta-milli");
    if (theta < 0 || theta > 1000)
      usage_error(fmt::format(
          "barnes-hut: --theta-milli {} outside [0, 1000] (0: every cell opened, a direct sum; "
          "above 1 a body's own cell could pass for a point mass)",
          theta));
    const std::int64_t eps = s.options.at("eps-milli"), dt = s.options.at("dt-milli");
    if (eps < 0) usage_error("barnes-hut: --eps-milli must be at least 0");
    if (dt < 1) usage_error("barnes-hut: --dt-milli must be at least 1");
    pb_.n = s.n;
    pb_.theta = static_cast<double>(theta) / 1000;
    pb_.eps = static_cast<double>(eps) / 1000;
    pb_.dt = static_cast<double>(dt) / 1000;
    pb_.steps = s.options.at("steps");
    if (pb_.steps < 1) usage_error("barnes-hut: --steps must be at least 1");
    const std::int64_t lo = s.n * me / P, hi = s.n * (me + 1) / P;
    for (std::int64_t i = lo; i < hi; ++i) initial_.push_back(plummer(s.seed, i));
    // The first step's trees, to size the global arrays (a step that outgrows them reallocates).
    barnes_hut::state probe;
    probe.particles = initial_;
    barnes_hut::begin_step(pb_, probe);
    const std::int64_t cells = *std::max_element(probe.cells_of.begin(), probe.cells_of.end());
    const std::int64_t bodies = all_reduce(std::ssize(probe.particles), max<>{});
    ops_ = std::ssize(probe.particles) * pb_.steps;
    const auto wanted = [&](const char* v) {
      return std::find(s.variants.begin(), s.variants.end(), v) != s.variants.end();
    };
    if (wanted("global"))
      global_.emplace(global_view_options{}, cells + cells / 4, bodies + bodies / 4);
    if (wanted("global-nocache"))
      nocache_.emplace(barnes_hut::nocache_options(), cells + cells / 4, bodies + bodies / 4);
  }
  void reset() override {
    st_.particles = initial_;
    st_.acc.clear();
    st_.at.clear();
  }
  void run(std::string_view v) override {
    if (v == "global")
      barnes_hut::global(pb_, st_, *global_);
    else if (v == "global-nocache")
      barnes_hut::global_nocache(pb_, st_, *nocache_);
    else if (v == "selector")
      barnes_hut::selector(pb_, st_);
    else if (v == "local")
      barnes_hut::local(pb_, st_);
  }
  bool check(std::string_view v) override {
    const bool local = v == "local";
    // Every value a number, and the accelerations within the bounds of the direct sums'.
    std::int64_t not_finite = 0;
    for (const particle& p : st_.particles)
      for (const double x : {p.x, p.y, p.z, p.vx, p.vy, p.vz}) not_finite += !std::isfinite(x);
    not_finite = all_reduce(not_finite);
    errors_ = pb_.n <= k_sampled_check ? direct_errors(local) : errors{};
    bounds_ = bounds_at(pb_.theta);
    const bool within = errors_.max <= bounds_.max && errors_.rms() <= bounds_.rms;
    // The positions and velocities of the first variant to pass; the others (and every
    // repetition of local) must give them bit for bit.
    std::uint64_t mine = 0;
    for (const particle& p : st_.particles) {
      std::int64_t h = p.id;
      for (const double x : {p.x, p.y, p.z, p.vx, p.vy, p.vz})
        h = static_cast<std::int64_t>(element_hash(h, std::bit_cast<std::int64_t>(x)));
      mine += element_hash(p.id, h);
    }
    hash_ = checksum_text(mine);
    std::optional<std::string>& first = local ? local_hash_ : hash_all_;
    const bool passed = not_finite == 0 && within && (!first || *first == hash_);
    if (passed && !first) first = hash_;
    // (The driver prints a failed variant's result: none. Say why here.)
    if (!passed && this_pe().rank() == 0)
      fmt::print(stderr, "barnes-hut: {} failed: {} values not finite; {}{}\n", v, not_finite,
                 error_text(),
                 first && *first != hash_
                     ? fmt::format("; positions hash {}, not {} as before", hash_, *first)
                     : std::string());
    return passed;
  }
  // Body-steps: this PE's bodies (after the first sort) times the steps.
  [[nodiscard]] std::int64_t ops_per_pe() const override { return ops_; }
  [[nodiscard]] std::string result() const override {
    return fmt::format("steps {}, {}, positions hash {}", pb_.steps, error_text(), hash_);
  }

 private:
  [[nodiscard]] std::string error_text() const {
    if (errors_.count == 0) return "accelerations not checked (n > 2^20)";
    return fmt::format("max rel. error {:.2e}, rms {:.2e} (bounds {:.2g}, {:.2g}) over {} bodies",
                       errors_.max, errors_.rms(), bounds_.max, bounds_.rms, errors_.count);
  }
  // Collective: the errors of this PE's accelerations (every body's, or a sample's) against the
  // direct sum over every body (local: over this PE's own bodies), at the positions where they
  // were computed; the largest and the sum of squares over every PE.
  errors direct_errors(bool local) const {
    const std::size_t m = st_.particles.size();
    std::vector<source> sources(m);
    for (std::size_t i = 0; i < m; ++i)
      sources[i] = {st_.at[i].x, st_.at[i].y, st_.at[i].z, st_.particles[i].id};
    if (!local) {
      // Every PE's (padded to the largest count: all_gather takes equal parts).
      sources.resize(static_cast<std::size_t>(all_reduce(static_cast<std::int64_t>(m), max<>{})),
                     source{0, 0, 0, -1});
      sources = all_gather(std::span<const source>(sources));
    }
    const std::size_t every = pb_.n <= k_full_check ? 1 : std::max<std::size_t>(1, m / k_samples);
    const double eps2 = pb_.eps * pb_.eps, mass = pb_.mass();
    errors e;
    for (std::size_t i = 0; i < m; i += every) {
      const vec3& p = st_.at[i];
      vec3 a;
      for (const source& s : sources) {
        if (s.id < 0 || s.id == st_.particles[i].id) continue;
        const double dx = s.x - p.x, dy = s.y - p.y, dz = s.z - p.z;
        barnes_hut::interact(a, dx, dy, dz, dx * dx + dy * dy + dz * dz, mass, eps2);
      }
      const vec3& b = st_.acc[i];
      const double diff = std::hypot(b.x - a.x, b.y - a.y, b.z - a.z);
      const double rel = diff / std::hypot(a.x, a.y, a.z);
      e.max = std::max(e.max, std::isnan(rel) ? HUGE_VAL : rel);
      e.sum2 += rel * rel;
      ++e.count;
    }
    e.max = all_reduce(e.max, max<>{});
    e.sum2 = all_reduce(e.sum2);
    e.count = all_reduce(e.count);
    return e;
  }

  problem pb_;
  std::vector<particle> initial_;  // this PE's bodies before the first step
  barnes_hut::state st_;
  std::optional<barnes_hut::views> global_, nocache_;
  std::int64_t ops_ = 0;
  errors errors_;
  error_bounds bounds_ = {};
  std::string hash_;
  std::optional<std::string> hash_all_, local_hash_;
};

}  // namespace

app_info barnes_hut_app() {
  app_info app{"barnes-hut",
               "steps of an n-body simulation (Plummer model, G = 1, softened) with Barnes-Hut "
               "octrees: bodies sorted along a Morton curve, each PE's tree of its own, every "
               "body's walk of all of them",
               "body-step",
               100000,
               0,
               2000,
               0,
               {"global", "global-nocache", "selector", "local"},
               [] { return std::make_unique<barnes_hut_bench>(); }};
  app.n_means = "bodies in total";
  app.n_help =
      "bodies in total, the Plummer model's N (default 100000); the accelerations are checked "
      "against a direct sum up to 2^20 bodies (every body's up to 4096)";
  app.baseline = "selector";
  app.options = {
      {"theta-milli", "the opening angle theta in thousandths (500: 0.5)", 500, 500},
      {"eps-milli", "the Plummer softening length in thousandths (10: 0.01)", 10, 10},
      {"dt-milli", "the time step in thousandths (10: 0.01; leapfrog, drift-kick-drift)", 10, 10},
      {"steps", "time steps per run (the sort, the trees, the walks and the update each)", 1, 2}};
  app.local_floor =
      "the same steps (the sort along the curve, the trees, the update) with each body's walk of "
      "its own PE's tree only: no other PE's cell or body read";
  return app;
}

}  // namespace mailroom::apps
