// SPDX-License-Identifier: MIT
// mailroom-bench stream: the memory bandwidth the PEs get when all of them stream at once, measured
// as STREAM does (copy, scale, add and triad over arrays much larger than the caches), so that the
// apps' times can be set against what this machine's memory delivers.
#include "common/stream.hpp"

#include "common/driver.hpp"

#include <mailroom/mailroom.hpp>
#include <mailroom/simulate.hpp>

#include <fmt/format.h>
#include <unistd.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <numeric>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace mailroom::apps {

namespace {

constexpr double k_scalar = 3.0;       // STREAM's q
constexpr double k_tolerance = 1e-13;  // STREAM's bound on the relative error of doubles
constexpr std::int64_t k_fallback_bytes = std::int64_t{256} << 20;  // the cache is unknown
constexpr int k_most_reps = 100;  // the values grow 15-fold a repetition: 15^100 is finite

// STREAM's four kernels, in its order (each reads what the one before wrote), and the bytes each
// counts per element: every array read and written once.
struct kernel {
  const char* name;
  int bytes_per_element;
};
constexpr std::array<kernel, 4> k_kernels = {
    {{"copy", 16}, {"scale", 16}, {"add", 24}, {"triad", 24}}};

struct arrays {
  std::vector<double> a, b, c;
};

void run_kernel(std::size_t k, arrays& x) {
  const std::size_t n = x.a.size();
  double* __restrict a = x.a.data();
  double* __restrict b = x.b.data();
  double* __restrict c = x.c.data();
  switch (k) {
    case 0:
      for (std::size_t i = 0; i < n; ++i) c[i] = a[i];
      break;
    case 1:
      for (std::size_t i = 0; i < n; ++i) b[i] = k_scalar * c[i];
      break;
    case 2:
      for (std::size_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
      break;
    default:
      for (std::size_t i = 0; i < n; ++i) a[i] = b[i] + k_scalar * c[i];
      break;
  }
}

// The PEs the launcher put on this node (1 when it does not say), for the memory check.
std::int64_t launcher_pes_on_node() {
  for (const char* v : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"})
    if (const char* s = std::getenv(v)) return std::max<std::int64_t>(std::atoll(s), 1);
  return 1;
}

// A command-line error of the stream subcommand (driver.hpp: usage_error).
[[noreturn]] void stream_error(const std::string& what) { usage_error("stream: " + what); }

// The largest data cache of CPU 0, in bytes (0: unknown). Linux's /sys first: it gives the cache
// a core can use (on AMD, the L3 of one core complex), where glibc's sysconf may give the sum over
// the whole package, which would size the arrays several times larger than they need to be.
std::int64_t last_level_cache_bytes() {
  std::int64_t bytes = 0;
  int deepest = 0;
  for (int i = 0;; ++i) {
    const std::string dir = fmt::format("/sys/devices/system/cpu/cpu0/cache/index{}/", i);
    std::ifstream level_in(dir + "level"), type_in(dir + "type"), size_in(dir + "size");
    if (!level_in || !size_in) break;
    int level = 0;
    std::string type, size;
    level_in >> level;
    type_in >> type;
    size_in >> size;  // "32768K"
    if (type == "Instruction" || size.empty() || level <= deepest) continue;
    char* unit = nullptr;
    std::int64_t value = std::strtoll(size.c_str(), &unit, 10);
    if (*unit == 'K') value <<= 10;
    if (*unit == 'M') value <<= 20;
    if (*unit == 'G') value <<= 30;
    if (value > 0) {
      bytes = value;
      deepest = level;
    }
  }
  if (bytes > 0) return bytes;
  for (const int name : {_SC_LEVEL4_CACHE_SIZE, _SC_LEVEL3_CACHE_SIZE, _SC_LEVEL2_CACHE_SIZE})
    if (const long v = sysconf(name); v > 0) return v;
  return 0;
}

std::string mib(std::int64_t bytes) {
  return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20));
}

// STREAM's check: every element holds what the same operations give on scalars, to within
// k_tolerance. Returns the wrong elements of this PE, the first of them named on stderr.
std::int64_t wrong_elements(const arrays& x, int reps) {
  double a = 1.0, b = 2.0, c = 0.0;
  for (int rep = 0; rep < reps; ++rep) {
    c = a;
    b = k_scalar * c;
    c = a + b;
    a = b + k_scalar * c;
  }
  std::int64_t wrong = 0;
  const std::array<std::pair<const std::vector<double>*, double>, 3> expected = {
      {{&x.a, a}, {&x.b, b}, {&x.c, c}}};
  for (std::size_t k = 0; k < expected.size(); ++k) {
    const auto& [values, want] = expected[k];
    for (std::size_t i = 0; i < values->size(); ++i) {
      const double got = (*values)[i];
      if (std::isfinite(got) && std::abs(got - want) <= k_tolerance * std::abs(want)) continue;
      if (wrong++ == 0)
        fmt::print(stderr,
                   "mailroom-bench: stream: the check FAILED on PE {}: {}[{}] is {}, expected {} "
                   "after {} repetitions\n",
                   this_pe().rank(), "abc"[k], i, got, want, reps);
    }
  }
  return wrong;
}

struct kernel_result {
  std::vector<double> seconds;  // slowest PE, per repetition
  double best = 0, mean = 0, worst = 0;
};

// Best, mean and worst of the repetitions, the first left out when there are more (STREAM's
// warm-up: the first also warms the TLBs, the page tables and the cores' clocks).
void summarise(kernel_result& r) {
  const auto from = r.seconds.begin() + (r.seconds.size() > 1 ? 1 : 0);
  r.best = *std::min_element(from, r.seconds.end());
  r.worst = *std::max_element(from, r.seconds.end());
  r.mean =
      std::accumulate(from, r.seconds.end(), 0.0) / static_cast<double>(r.seconds.end() - from);
}

}  // namespace

int run_stream(int argc, char** argv) {
  const std::int64_t cache = last_level_cache_bytes();
  const std::int64_t default_bytes = cache > 0 ? 4 * cache : k_fallback_bytes;
  CLI::App cli{
      "mailroom-bench stream: the memory bandwidth of this machine, as STREAM measures it. Every "
      "PE at once runs STREAM's four kernels over three arrays of its own: copy (c = a), scale "
      "(b = q c), add (c = a + b) and triad (a = b + q c), counting 16, 16, 24 and 24 bytes per "
      "element, so that the PEs of a node share its bandwidth as the apps' PEs do. Each kernel "
      "is timed from a barrier to a barrier (the slowest PE); the table gives the best "
      "repetition (the first left out when there are more, as STREAM does) in GB/s (10^9 bytes) "
      "per PE and per node (its PEs summed), and the arrays are checked after the last.\n"
      "Run under mpirun, e.g.: mpirun -n 2 mailroom-bench stream"};
  std::int64_t bytes = -1;
  int reps = 10;
  std::string json_file;
  cli.add_option("--bytes", bytes,
                 fmt::format("bytes per array per PE, e.g. 1M or 2G (K, M, G: powers of 1024; "
                             "default {}: {})",
                             mib(default_bytes),
                             cache > 0 ? fmt::format("4 x the {} last-level cache", mib(cache))
                                       : "the cache's size is unknown"))
      ->transform(CLI::AsSizeValue(false))
      ->check(CLI::Range(std::int64_t{8}, std::int64_t{1} << 50));
  cli.add_option("--reps", reps, "timed repetitions (default 10)")
      ->check(CLI::Range(1, k_most_reps));
  cli.add_option("--json", json_file, "also write the results as JSON to this file");
  if (!parse_command_line(cli, argc, argv, "stream: ", " (see stream --help)")) return 0;
  if (simulated())
    stream_error(
        "it measures this computer's memory: unset MAILROOM_SIM (a simulated machine's clock is "
        "not this computer's)");
  if (bytes < 0) bytes = default_bytes;
  const auto n = static_cast<std::size_t>(bytes / 8);
  // Refuse what this node cannot hold before allocating it.
  const double need =
      3.0 * 8.0 * static_cast<double>(n) * static_cast<double>(launcher_pes_on_node());
  const double have = physical_memory_bytes();
  if (need > have)
    stream_error(
        fmt::format("3 arrays of {} on each of {} PEs need about {:.1f} GiB on this node; "
                    "it has {:.1f} GiB",
                    mib(bytes), launcher_pes_on_node(), need / (1 << 30), have / (1 << 30)));

  runtime rt(argc, argv);
  const bool root = this_pe().rank() == 0;
  arrays x{std::vector<double>(n, 1.0), std::vector<double>(n, 2.0), std::vector<double>(n, 0.0)};
  std::array<kernel_result, k_kernels.size()> results;
  for (int rep = 0; rep < reps; ++rep)
    for (std::size_t k = 0; k < k_kernels.size(); ++k) {
      barrier();
      const double t0 = wtime();
      run_kernel(k, x);
      barrier();
      results[k].seconds.push_back(all_reduce(wtime() - t0, max<>{}));
    }
  const std::int64_t wrong = all_reduce(wrong_elements(x, reps));
  for (auto& r : results) summarise(r);

  const int pes = num_pes(), nodes = num_nodes();
  // GB/s of one PE, and of a node (all PEs' bytes over the nodes: the node's PEs summed).
  auto per_pe = [&](std::size_t k, double seconds) {
    return static_cast<double>(k_kernels[k].bytes_per_element) * static_cast<double>(n) / seconds /
           1e9;
  };
  auto per_node = [&](std::size_t k, double seconds) { return per_pe(k, seconds) * pes / nodes; };
  if (root) {
    fmt::print(
        "stream: {} PE{} on {} node{}, 3 arrays of {} per PE ({}), {} repetitions{}, GB = 10^9 "
        "bytes\n",
        pes, pes == 1 ? "" : "s", nodes, nodes == 1 ? "" : "s",
        mib(static_cast<std::int64_t>(n) * 8),
        cache > 0 ? fmt::format("last-level cache {}", mib(cache)) : "cache size unknown", reps,
        reps > 1 ? " (best, mean and max of all but the first)" : "");
    fmt::print("{:<7} {:>9} {:>10} {:>11} {:>10} {:>10} {:>10}\n", "kernel", "GB/s/PE", "GB/s/node",
               "bytes/elem", "best s", "mean s", "max s");
    for (std::size_t k = 0; k < k_kernels.size(); ++k) {
      const kernel_result& r = results[k];
      fmt::print("{:<7} {:>9.2f} {:>10.2f} {:>11} {:>10.6f} {:>10.6f} {:>10.6f}\n",
                 k_kernels[k].name, per_pe(k, r.best), per_node(k, r.best),
                 k_kernels[k].bytes_per_element, r.best, r.mean, r.worst);
    }
    if (wrong == 0)
      fmt::print("check PASSED: every element of every PE's arrays as computed on scalars\n");
    else
      fmt::print("check FAILED: {} elements wrong over the PEs (see stderr)\n", wrong);
    std::fflush(stdout);
    if (!json_file.empty()) {
      char host[256] = {};
      if (gethostname(host, sizeof host - 1) != 0) std::snprintf(host, sizeof host, "unknown");
      nlohmann::json j;
      j["app"] = "stream";
      j["machine"] = {{"hostname", host},
                      {"cores", std::thread::hardware_concurrency()},
                      {"mpi", mpi_library()},
                      {"nodes", nodes},
                      {"last_level_cache_bytes", cache}};
      j["pes"] = pes;
      j["bytes_per_array_per_pe"] = static_cast<std::int64_t>(n) * 8;
      j["reps"] = reps;
      j["check"] = wrong == 0 ? "PASSED" : "FAILED";
      j["kernels"] = nlohmann::json::array();
      for (std::size_t k = 0; k < k_kernels.size(); ++k) {
        const kernel_result& r = results[k];
        j["kernels"].push_back({{"name", k_kernels[k].name},
                                {"bytes_per_element", k_kernels[k].bytes_per_element},
                                {"seconds", r.seconds},
                                {"best_s", r.best},
                                {"mean_s", r.mean},
                                {"max_s", r.worst},
                                {"gb_per_s_per_pe", per_pe(k, r.best)},
                                {"gb_per_s_per_node", per_node(k, r.best)}});
      }
      std::ofstream out(json_file);
      if (!out) MAILROOM_FAIL("cannot write the JSON file '{}'", json_file);
      out << j.dump(2) << '\n';
    }
  }
  return wrong == 0 ? 0 : 1;
}

}  // namespace mailroom::apps
