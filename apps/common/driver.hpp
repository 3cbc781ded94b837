// SPDX-License-Identifier: MIT
// The benchmark driver shared by every mini-app: one input per run generated from the seed before
// timing, the same timer (barrier to barrier, slowest PE, median of repetitions) and an exact
// checker for every variant; a table on rank 0 and, on request, JSON.
#pragma once

#include <mailroom/collectives.hpp>
#include <mailroom/runtime.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
}  // namespace CLI

namespace mailroom::apps {

struct sizes {
  /// Operations (table apps) or rows (matrix apps) per PE; stencil: the grid's side, barnes-hut:
  /// the bodies in all (app_info::n_help says).
  std::int64_t n = 0;
  std::int64_t table_per_pe = 0;  ///< table elements per PE (table apps)
  double nnz_per_row = 0;         ///< average nonzeros per row of generated matrices
  std::string matrix;             ///< a Matrix Market file to use instead of a generated matrix
  std::uint64_t seed = 1;
  std::map<std::string, std::int64_t> options;  ///< the app's own options (app_info::options)
  std::vector<std::string> variants;  ///< the variants this run times (prepare() may skip the rest)
};

/// An integer option of one app's own (e.g. reductions' --partitions).
struct app_option {
  std::string name;  ///< the flag without its dashes
  std::string help;
  std::int64_t default_value, quick_value;
};

/// One mini-app as the driver sees it. Every call is collective (every PE, same order).
class kernel_bench {
 public:
  virtual ~kernel_bench() = default;
  /// Generates this PE's input and whatever the checker needs (untimed).
  virtual void prepare(const sizes& s) = 0;
  /// Clears the outputs before a run (untimed).
  virtual void reset() = 0;
  /// Runs one variant (timed).
  virtual void run(std::string_view variant) = 0;
  /// True on every PE when the variant's output is exactly right everywhere.
  virtual bool check(std::string_view variant) = 0;
  /// Operations per PE, for ns per operation (after prepare; e.g. nonzeros of this PE's rows).
  /// The slowest PE's count is reported. Default: sizes.n.
  [[nodiscard]] virtual std::int64_t ops_per_pe() const { return -1; }
  /// What the variant computed, as Bale prints it ("triangles 1234", "nnz 500, checksum ..."),
  /// from its output, never from the input. Called after a passing check; collective, the value
  /// is rank 0's. Default: none.
  [[nodiscard]] virtual std::string result() const { return {}; }
  /// What the driver divides the variant's measured time by: P for a floor that runs the serial
  /// algorithm over the whole input on one PE (its time per PE's share of the work), else 1.
  [[nodiscard]] virtual int time_divisor(std::string_view /*variant*/) const { return 1; }
  /// Why the variant cannot run here (a variant that calls MPI itself, on the simulated machine),
  /// or empty when it can. Asked on every PE before prepare(), with the same answer everywhere:
  /// the driver leaves such a variant out of the run (and sizes.variants) with a note.
  [[nodiscard]] virtual std::string unavailable(std::string_view /*variant*/) const { return {}; }
};

/// How the driver knows a mini-app.
struct app_info {
  std::string name;                       ///< the subcommand
  std::string summary;                    ///< one line for --help
  std::string op;                         ///< what one operation is ("update", "nonzero")
  std::int64_t default_n, default_table;  ///< the paper's sizes (per PE); table 0: no table
  std::int64_t quick_n, quick_table;      ///< --quick
  std::vector<std::string> variants;      ///< in the order they run and print
  std::function<std::unique_ptr<kernel_bench>()> make;
  double default_nnz = 0, quick_nnz = 0;  ///< nonzeros per row; 0: not a matrix app
  bool takes_matrix = false;              ///< accepts --matrix FILE.mtx
  std::string n_means = "operations";     ///< what -n counts, for --help ("updates", "rows")
  std::string baseline = "naive";         ///< the variant the others are compared with
  std::vector<app_option> options = {};   ///< options of this app's own
  /// What the `local` variant does, in one line (its --help and the table print it): the floor
  /// the others are compared with in the "vs local" column. Empty: the app has no local variant.
  std::string local_floor = {};
  /// -n's default, as a multiple of the table (RandomAccess: 4); 0: default_n and quick_n.
  std::int64_t n_per_table = 0;
  /// The benchmark's own figure, from all PEs' operations per second (RandomAccess: GUP/s,
  /// 1e-9 per update per second); empty unit: none.
  struct rate_figure {
    std::string unit;
    double scale = 0;
  } rate = {};
  /// Whether the input depends on --seed (random-access: HPCC's stream is fixed; the app then
  /// takes no --seed, and its table and JSON show none).
  bool seeded = true;
  /// -n's whole --help text when it is no count per PE (stencil: the grid's side), which the
  /// table then names beside the app's options; empty: "<n_means> per PE (default ...)".
  std::string n_help = {};
};

/// Every mini-app (defined next to each app's bench.cpp).
app_info histogram_app();
app_info index_gather_app();
app_info permute_matrix_app();
app_info transpose_matrix_app();
app_info randperm_app();
app_info toposort_app();
app_info triangles_app();
app_info reductions_app();
app_info random_access_app();
app_info pointer_chase_app();
app_info permutation_app();
app_info stencil_app();
app_info barnes_hut_app();
app_info large_messages_app();

/// `mailroom-bench bfs ...` (argv[0] is "bfs"): Graph500's BFS (apps/bfs); the exit status.
int run_graph500(int argc, char** argv);

/// mailroom-bench's main.
int run_driver(int argc, char** argv);

/// Before MPI is up the rank is only in the launcher's environment: true on its rank 0 (or
/// without a launcher), so that one PE prints.
bool launcher_rank_zero();
/// This machine's physical memory in bytes (what the apps' size checks compare with).
double physical_memory_bytes();
/// Fails with "mailroom-bench: error: WHAT" (on rank 0) and status 2, as every command-line
/// error of mailroom-bench does.
[[noreturn]] void usage_error(const std::string& what);
/// Parses the command line: false after printing the help asked for (on rank 0); a parse error
/// fails as usage_error does, with the error's first line, `prefix` before it and `hint` after.
bool parse_command_line(CLI::App& cli, int argc, char** argv, const std::string& prefix,
                        const std::string& hint);

/// Collective: sends every value to PE owner(value) in one all-to-all; returns the values that
/// came to this PE. What the checkers count with, in memory that grows with the data, not P.
template <class T, class Owner>
std::vector<T> to_owners(std::span<const T> values, Owner&& owner) {
  const auto P = static_cast<std::size_t>(num_pes());
  std::vector<int> counts(P, 0), displs(P, 0);
  for (const T& v : values) ++counts[static_cast<std::size_t>(owner(v))];
  for (std::size_t p = 1; p < P; ++p) displs[p] = displs[p - 1] + counts[p - 1];
  std::vector<T> by_owner(values.size());
  std::vector<int> at(displs);
  for (const T& v : values)
    by_owner[static_cast<std::size_t>(at[static_cast<std::size_t>(owner(v))]++)] = v;
  return all_to_all_v(std::span<const T>(by_owner), std::span<const int>(counts),
                      std::span<const int>(displs));
}
/// (Of 64-bit values.)
std::vector<std::int64_t> to_owners(const std::vector<std::int64_t>& values,
                                    const std::function<int(std::int64_t)>& owner);

/// Collective checker: true on every PE when the PEs' parts together hold each of 0..n-1 exactly
/// once. Each value is counted on the PE that owns its block of n/P (one all-to-all), so the
/// memory per PE grows with its part, not with P (the simulated machine runs thousands of PEs).
bool is_distributed_permutation(const std::vector<std::int64_t>& part, std::int64_t n);

/// The input generator every app uses: a 64-bit stream seeded by (seed, PE), so the input does
/// not depend on the variant; below(range) is uniform in [0, range).
class input_stream {
 public:
  input_stream(std::uint64_t seed, int pe) {
    std::seed_seq seq{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                      static_cast<std::uint32_t>(pe), 0x6d61696cu};
    rng_.seed(seq);
  }
  std::uint64_t next() { return rng_(); }
  std::int64_t below(std::int64_t range) {
    // Lemire's multiply-shift: uniform enough, and the same on every platform.
    __extension__ using u128 = unsigned __int128;
    return static_cast<std::int64_t>(
        (static_cast<u128>(rng_()) * static_cast<std::uint64_t>(range)) >> 64);
  }

 private:
  std::mt19937_64 rng_;
};

/// A value that depends on every bit of g and the seed (the index-gather table's contents).
inline std::int64_t mix(std::uint64_t g, std::uint64_t seed) {
  std::uint64_t z = g + 0x9e3779b97f4a7c15ULL * (seed + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return static_cast<std::int64_t>((z ^ (z >> 31)) >> 1);
}

}  // namespace mailroom::apps
