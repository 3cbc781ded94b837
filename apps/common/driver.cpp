// SPDX-License-Identifier: MIT
// mailroom-bench: parses the command line, runs every requested variant of one mini-app on the
// same input with the same timer and checker, prints a table on rank 0 and writes JSON.
#include "common/driver.hpp"
#include "common/plan.hpp"
#include "common/stream.hpp"

#include <mailroom/mailroom.hpp>

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

namespace mailroom::apps {

double physical_memory_bytes() {
  return static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE));
}

bool launcher_rank_zero() {
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"})
    if (const char* s = std::getenv(v)) return std::string_view(s) == "0";
  return true;
}

void usage_error(const std::string& what) {
  if (launcher_rank_zero()) std::fprintf(stderr, "mailroom-bench: error: %s\n", what.c_str());
  std::exit(2);
}

bool parse_command_line(CLI::App& cli, int argc, char** argv, const std::string& prefix,
                        const std::string& hint) {
  try {
    cli.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help
    if (launcher_rank_zero()) cli.exit(e);
    return false;
  } catch (const CLI::ParseError& e) {
    std::string what = e.what();
    if (auto nl = what.find('\n'); nl != std::string::npos) what.resize(nl);
    usage_error(prefix + what + hint);
  }
  return true;
}

namespace {

struct settings {
  std::string app;
  std::int64_t n = -1, table = -1;
  double nnz = -1;
  std::string matrix;
  std::uint64_t seed = 1;
  std::vector<std::string> variants;
  std::map<std::string, std::int64_t> options;  // the app's own, as given
  int reps = 3;
  int workers = 0;  // 0: MAILROOM_WORKERS (default 1)
  std::string json;
  bool quick = false;
};

struct variant_result {
  std::string name;
  std::vector<double> seconds;  // slowest PE, per repetition
  bool passed = true;
  statistics traffic;  // this PE's, summed over the repetitions
  std::string result;  // what it computed (kernel_bench::result), at its last repetition
  int time_divisor = 1;
  global_view_statistics view = {};  // this PE's global arrays' caches, summed likewise
  [[nodiscard]] double median() const {
    auto s = seconds;
    std::sort(s.begin(), s.end());
    return s.empty() ? 0 : s[s.size() / 2];
  }
  [[nodiscard]] double min() const { return *std::min_element(seconds.begin(), seconds.end()); }
  [[nodiscard]] double max() const { return *std::max_element(seconds.begin(), seconds.end()); }
};

std::int64_t peak_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<std::int64_t>(u.ru_maxrss) * 1024;
}

std::string hostname() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

// The round trip between PE 0 and the last PE before and after the timed repetitions.
struct round_trips {
  double before_s = 0, after_s = 0;
};

// A variant's traffic per repetition, over every PE (collective): mailroom's counters, so zero
// for the variants that do not use mailroom (naive, bsp, local).
struct traffic_summary {
  std::int64_t messages = 0, bytes = 0, buffers = 0, idle_flushed = 0, forwarded = 0, combined = 0;
  std::int64_t combined_at_hops = 0;
  std::vector<std::int64_t> hop_in, hop_combined;  // per hop of the routes (message reductions)
  std::int64_t network_buffers = 0, network_bytes = 0;  // to PEs of other nodes (routing's view)
  double mean_fill = 0, credit_wait_s_max_pe = 0;
  std::vector<std::int64_t> links;  // messages from PE i to PE j at i * P + j (P <= 64 only)
  global_view_statistics view;      // the global view's caches (every PE's, summed)
  // Whether the variant went through a global array's cache to another PE (syncs alone, which
  // every barrier counts while an array lives, do not count).
  [[nodiscard]] bool used_global_view() const noexcept {
    return view.hits != 0 || view.misses != 0 || view.pages_fetched != 0 || view.evictions != 0 ||
           view.pages_written_back != 0 || view.direct != 0;
  }
};
constexpr int k_most_pes_with_links = 64;

std::vector<traffic_summary> summarise_traffic(const std::vector<variant_result>& results,
                                               int reps) {
  std::vector<traffic_summary> out;
  const int P = num_pes();
  for (const auto& r : results) {
    traffic_summary t;
    const std::int64_t n = std::max(reps, 1);
    t.messages = all_reduce(r.traffic.messages_sent) / n;
    t.bytes = all_reduce(r.traffic.bytes_sent) / n;
    t.buffers = all_reduce(r.traffic.buffers_sent) / n;
    t.idle_flushed = all_reduce(r.traffic.idle_flushed) / n;
    t.forwarded = all_reduce(r.traffic.messages_forwarded) / n;
    t.combined = all_reduce(r.traffic.messages_combined) / n;
    t.combined_at_hops = all_reduce(r.traffic.messages_combined_at_hops) / n;
    const auto hops = static_cast<std::size_t>(
        all_reduce(static_cast<std::int64_t>(r.traffic.hop_in.size()), max<>{}));
    for (std::size_t k = 0; k < hops; ++k) {
      const auto at = [k](const std::vector<std::int64_t>& v) {
        return k < v.size() ? v[k] : std::int64_t{0};
      };
      t.hop_in.push_back(all_reduce(at(r.traffic.hop_in)) / n);
      t.hop_combined.push_back(all_reduce(at(r.traffic.hop_combined)) / n);
    }
    std::int64_t net_buffers = 0, net_bytes = 0;
    const int here = routing_node(this_pe());
    for (std::size_t d = 0; d < r.traffic.buffers_to.size(); ++d)
      if (routing_node(pe(d)) != here) {
        net_buffers += r.traffic.buffers_to[d];
        net_bytes += r.traffic.bytes_to[d];
      }
    t.network_buffers = all_reduce(net_buffers) / n;
    t.network_bytes = all_reduce(net_bytes) / n;
    const std::int64_t room = all_reduce(r.traffic.room_sent) / n;
    t.mean_fill = room > 0 ? static_cast<double>(t.bytes) / static_cast<double>(room) : 0.0;
    t.credit_wait_s_max_pe =
        all_reduce(r.traffic.credit_wait_seconds / static_cast<double>(n), max<>{});
    std::vector<std::int64_t> view;  // (one all_reduce for every counter)
    for (const auto f : global_view_statistics::counters) view.push_back(r.view.*f);
    all_reduce(std::span<std::int64_t>(view));
    for (std::size_t k = 0; k < view.size(); ++k)
      t.view.*global_view_statistics::counters[k] = view[k] / n;
    if (P <= k_most_pes_with_links) {
      std::vector<std::int64_t> mine(static_cast<std::size_t>(P), 0);
      for (std::size_t d = 0; d < r.traffic.messages_to.size() && d < mine.size(); ++d)
        mine[d] = r.traffic.messages_to[d] / n;
      t.links = all_gather(std::span<const std::int64_t>(mine));  // (P <= 64: P^2 is small)
    }
    out.push_back(std::move(t));
  }
  return out;
}

// The variants left out of a run (kernel_bench::unavailable): name and why.
using skipped_list = std::vector<std::pair<std::string, std::string>>;

// The median of a variant that ran and passed; 0 otherwise.
double median_of(const std::vector<variant_result>& results, std::string_view name) {
  for (const auto& r : results)
    if (r.name == name && r.passed) return r.median();
  return 0;
}

// The app's own figure (GUP/s) for a run of `seconds`: every PE did sz.n operations.
double rate_of(const app_info& app, const sizes& sz, double seconds) {
  return static_cast<double>(sz.n) * num_pes() / seconds * app.rate.scale;
}

void write_json(const settings& st, const app_info& app, const sizes& sz,
                const std::vector<variant_result>& results, std::int64_t rss,
                std::int64_t pool_peak, const round_trips& rt,
                const std::vector<traffic_summary>& traffic, const skipped_list& skipped) {
  using nlohmann::json;
  json j;
  j["app"] = app.name;
  j["machine"] = {{"hostname", hostname()},
                  {"cores", std::thread::hardware_concurrency()},
                  {"mpi", mpi_library()},
                  {"nodes", num_nodes()},
                  {"round_trip_us", {{"before", rt.before_s * 1e6}, {"after", rt.after_s * 1e6}}}};
  j["pes"] = num_pes();
  j["workers"] = num_workers();
  j["sizes"] = {{"ops_per_pe", sz.n}, {"table_per_pe", sz.table_per_pe}};
  for (const auto& [name, value] : sz.options) j["sizes"][name] = value;
  if (app.seeded) j["seed"] = sz.seed;
  j["reps"] = st.reps;
  j["operation"] = app.op;
  const auto& cfg = current_config();
  j["config"] = {{"buffer_bytes", cfg.buffer_bytes},
                 {"credits", cfg.credits},
                 {"link_credits", aggregation().link_credits},
                 {"budget_bytes", cfg.budget_bytes},
                 {"shared_slots", cfg.shared_slots},
                 {"routing", routing_in_use()},
                 {"node_size", cfg.node_size},
                 // what this run had: slots in each PE's shared pool (0: none, or one PE per
                 // node), and their size
                 {"pool_slots", aggregation().shared_slots},
                 {"node_buffer_bytes", aggregation().node_buffer_bytes}};
  j["memory"] = {{"peak_rss_bytes_max_pe", rss}, {"aggregation_peak_bytes_max_pe", pool_peak}};
  const double naive = median_of(results, app.baseline), local = median_of(results, "local");
  j["variants"] = json::array();
  for (std::size_t i = 0; i < results.size(); ++i) {
    const variant_result& r = results[i];
    const traffic_summary& t = traffic[i];
    json v = {{"name", r.name}, {"check", r.passed ? "PASSED" : "FAILED"}, {"seconds", r.seconds}};
    if (r.time_divisor != 1) v["time_divisor"] = r.time_divisor;  // seconds are time / this
    // mailroom's counters per repetition, all PEs (links[i][j]: messages from PE i to PE j).
    v["traffic"] = {
        {"messages", t.messages},
        {"bytes", t.bytes},
        {"buffers", t.buffers},
        {"idle_flushed_messages", t.idle_flushed},
        {"forwarded_messages", t.forwarded},
        {"combined_messages", t.combined},
        {"combined_at_hops_messages", t.combined_at_hops},
        {"hops", {{"in", t.hop_in}, {"combined", t.hop_combined}}},
        {"network",
         {{"buffers", t.network_buffers},
          {"bytes", t.network_bytes},
          {"mean_payload_bytes", t.network_buffers > 0 ? static_cast<double>(t.network_bytes) /
                                                             static_cast<double>(t.network_buffers)
                                                       : 0.0}}},
        {"mean_fill", t.mean_fill},
        {"credit_wait_s_max_pe", t.credit_wait_s_max_pe}};
    if (t.used_global_view())
      v["traffic"]["global_view"] = {{"hits", t.view.hits},
                                     {"misses", t.view.misses},
                                     {"hit_rate", t.view.hit_rate()},
                                     {"pages_fetched", t.view.pages_fetched},
                                     {"bytes_fetched", t.view.bytes_fetched},
                                     {"pages_prefetched", t.view.pages_prefetched},
                                     {"evictions", t.view.evictions},
                                     {"pages_written_back", t.view.pages_written_back},
                                     {"runs_written_back", t.view.runs_written_back},
                                     {"bytes_written_back", t.view.bytes_written_back},
                                     {"syncs", t.view.syncs},
                                     {"direct", t.view.direct}};
    if (!t.links.empty()) {
      json links = json::array();
      const auto P = static_cast<std::size_t>(num_pes());
      for (std::size_t p = 0; p < P; ++p)
        links.push_back(
            std::vector<std::int64_t>(t.links.begin() + static_cast<std::ptrdiff_t>(p * P),
                                      t.links.begin() + static_cast<std::ptrdiff_t>((p + 1) * P)));
      v["traffic"]["links"] = links;
    }
    if (r.passed) {
      v["median_s"] = r.median();
      v["min_s"] = r.min();
      v["max_s"] = r.max();
      v["ns_per_op_per_pe"] =
          r.median() * 1e9 / static_cast<double>(std::max<std::int64_t>(sz.n, 1));
      if (naive > 0) v["speedup_vs_" + app.baseline] = naive / r.median();
      if (local > 0) v["vs_local"] = r.median() / local;  // times slower than the floor
      v["result"] = r.result;
      if (!app.rate.unit.empty())
        v["rate"] = {{"unit", app.rate.unit}, {"value", rate_of(app, sz, r.median())}};
    }
    j["variants"].push_back(v);
  }
  if (!skipped.empty()) {
    j["skipped"] = json::array();
    for (const auto& [name, why] : skipped) j["skipped"].push_back({{"name", name}, {"why", why}});
  }
  std::ofstream out(st.json);
  if (!out) MAILROOM_FAIL("cannot write the JSON file '{}'", st.json);
  out << j.dump(2) << '\n';
}

// "12.34x", or "12345x" from 1000 on (the column stays 9 wide; the simulated machine's clock
// gives local, which never communicates, next to no time).
std::string ratio(double x) {
  return x < 1000 ? fmt::format("{:.2f}x", x) : fmt::format("{:.0f}x", x);
}

void print_table(const app_info& app, const sizes& sz, const std::vector<variant_result>& results,
                 int reps, const std::vector<traffic_summary>& traffic,
                 const skipped_list& skipped) {
  std::string shape;
  if (!sz.matrix.empty())
    shape = fmt::format(", matrix {}", sz.matrix);
  else if (sz.table_per_pe > 0)
    shape = fmt::format(", {} table elements per PE", sz.table_per_pe);
  else if (sz.nnz_per_row > 0)
    shape = fmt::format(", {} nonzeros per row", sz.nnz_per_row);
  for (const auto& [name, value] : sz.options) shape += fmt::format(", {} {}", name, value);
  fmt::print("{}: {} PEs{} (routing {}), {} {}s per PE{}, {}, median of {}\n", app.name, num_pes(),
             num_workers() > 1 ? fmt::format(" x {} workers", num_workers()) : "", routing_in_use(),
             sz.n, app.op, shape, app.seeded ? fmt::format("seed {}", sz.seed) : "no seed", reps);
  // The result gets a column when the variants differ in it (local often does), else a line.
  std::vector<std::string> shown;
  for (const auto& r : results)
    if (r.passed && std::find(shown.begin(), shown.end(), r.result) == shown.end())
      shown.push_back(r.result);
  const bool result_column = shown.size() > 1;
  fmt::print("{:<10} {:>10} {:>10} {:>10} {:>14} {:>9} {:>9}  {}{}\n", "variant", "median s",
             "min s", "max s", fmt::format("ns/{}/PE", app.op), "vs " + app.baseline, "vs local",
             "check", result_column ? "   result" : "");
  const double naive = median_of(results, app.baseline), local = median_of(results, "local");
  for (const auto& r : results) {
    if (!r.passed) {
      fmt::print("{:<10} {:>10} {:>10} {:>10} {:>14} {:>9} {:>9}  FAILED{}\n", r.name, "-", "-",
                 "-", "-", "-", "-", result_column ? "   -" : "");
      continue;
    }
    const double ns = r.median() * 1e9 / static_cast<double>(std::max<std::int64_t>(sz.n, 1));
    const std::string speedup = naive > 0 ? ratio(naive / r.median()) : "-";
    const std::string slower = local > 0 ? ratio(r.median() / local) : "-";
    fmt::print("{:<10} {:>10.4f} {:>10.4f} {:>10.4f} {:>14.2f} {:>9} {:>9}  PASSED{}\n", r.name,
               r.median(), r.min(), r.max(), ns, speedup, slower,
               result_column ? "   " + (r.result.empty() ? "-" : r.result) : "");
  }
  if (shown.size() == 1 && !shown.front().empty())
    fmt::print("result (every variant): {}\n", shown.front());
  if (local > 0 && !app.local_floor.empty()) fmt::print("local: {}\n", app.local_floor);
  if (!app.rate.unit.empty()) {
    std::string rates;
    for (const auto& r : results)
      if (r.passed)
        rates += fmt::format("{}{} {:.4g}", rates.empty() ? "" : ", ", r.name,
                             rate_of(app, sz, r.median()));
    fmt::print("{} (all PEs' {}s per second of the median run x {:g}): {}\n", app.rate.unit, app.op,
               app.rate.scale, rates);
  }
  // What crossed the network (to PEs of other nodes), per PE and repetition, and how full.
  std::string net;
  for (std::size_t i = 0; i < results.size() && i < traffic.size(); ++i) {
    const traffic_summary& t = traffic[i];
    if (t.network_buffers == 0) continue;
    net +=
        fmt::format("{}{} {:.1f} x {:.0f} B", net.empty() ? "" : ", ", results[i].name,
                    static_cast<double>(t.network_buffers) / num_pes(),
                    static_cast<double>(t.network_bytes) / static_cast<double>(t.network_buffers));
  }
  if (!net.empty()) fmt::print("network buffers per PE x mean payload (to other nodes): {}\n", net);
  // What message reductions saved: messages that travelled, and those folded into them.
  std::string combined;
  for (std::size_t i = 0; i < results.size() && i < traffic.size(); ++i)
    if (traffic[i].combined > 0)
      combined +=
          fmt::format("{}{} {} sent, {} combined at the sender{}", combined.empty() ? "" : "; ",
                      results[i].name, traffic[i].messages, traffic[i].combined,
                      traffic[i].combined_at_hops > 0
                          ? fmt::format(" and {} at hops", traffic[i].combined_at_hops)
                          : std::string());
  if (!combined.empty()) fmt::print("messages per repetition, all PEs: {}\n", combined);
  // What the global view's caches did, for the variants that read or wrote other PEs' elements.
  for (std::size_t i = 0; i < results.size() && i < traffic.size(); ++i) {
    const global_view_statistics& g = traffic[i].view;
    if (!traffic[i].used_global_view()) continue;
    fmt::print(
        "global view per repetition, all PEs: {}: hits {}, misses {} (hit rate {:.1f}%), fetched "
        "{} pages ({} bytes, of them {} prefetched), wrote back {} pages ({} bytes){}{}\n",
        results[i].name, g.hits, g.misses, 100.0 * g.hit_rate(), g.pages_fetched, g.bytes_fetched,
        g.pages_prefetched, g.pages_written_back, g.bytes_written_back,
        g.evictions > 0 ? fmt::format(", evicted {}", g.evictions) : std::string(),
        g.direct > 0 ? fmt::format(", {} accesses one-sided", g.direct) : std::string());
  }
  for (const auto& [name, why] : skipped) fmt::print("{}: not run: {}\n", name, why);
  if (simulated()) fmt::print("{}: the times are its clock, not this computer's\n", mpi_library());
  std::fflush(stdout);
}

}  // namespace

int run_driver(int argc, char** argv) {
  // The capacity plan needs no MPI job and no app.
  if (argc > 1 && std::string_view(argv[1]) == "plan") return run_plan(argc - 1, argv + 1);
  // The machine's memory bandwidth (STREAM): an MPI job, but no app.
  if (argc > 1 && std::string_view(argv[1]) == "stream") return run_stream(argc - 1, argv + 1);
  // Graph500's BFS: an MPI job with a report of its own (its statistics over 64 searches).
  if (argc > 1 && std::string_view(argv[1]) == "bfs") return run_graph500(argc - 1, argv + 1);
  // Apps are registered here once all their variants exist and pass their checks.
  const std::vector<app_info> apps = {
      histogram_app(),     index_gather_app(),  permute_matrix_app(), transpose_matrix_app(),
      randperm_app(),      toposort_app(),      triangles_app(),      reductions_app(),
      random_access_app(), pointer_chase_app(), permutation_app(),    stencil_app(),
      barnes_hut_app(),    large_messages_app()};

  CLI::App cli{
      "mailroom-bench: the Bale mini-apps in every variant, timed and checked.\n"
      "Run under mpirun, e.g.: mpirun -n 2 mailroom-bench histogram --reps 5\n"
      "`mailroom-bench plan --help`: the memory reserved per PE at any scale (no MPI job).\n"
      "`mailroom-bench stream --help`: the memory bandwidth of this machine (STREAM).\n"
      "`mailroom-bench bfs --help`: Graph500's BFS, by its rules (TEPS)."};
  cli.require_subcommand(1);
  settings st;
  std::map<std::string, CLI::App*> subs;
  for (const auto& a : apps) {
    CLI::App* sub = cli.add_subcommand(a.name, a.summary);
    sub->add_option("-n,--ops", st.n,
                    a.n_help.empty() ? fmt::format("{} per PE (default {})", a.n_means, a.default_n)
                                     : a.n_help)
        ->check(CLI::Range(std::int64_t{0}, std::int64_t{4'000'000'000}));
    if (a.default_table > 0)
      sub->add_option("-T,--table", st.table,
                      fmt::format("table elements per PE (default {})", a.default_table))
          ->check(CLI::Range(std::int64_t{1}, std::int64_t{4'000'000'000}));
    if (a.default_nnz > 0)
      sub->add_option("--nnz-per-row", st.nnz,
                      fmt::format("average nonzeros per row (default {})", a.default_nnz))
          ->check(CLI::Range(0.0, 1e6));
    if (a.takes_matrix)
      sub->add_option("--matrix", st.matrix, "a Matrix Market file to use as the input matrix")
          ->check(CLI::ExistingFile);
    for (const auto& o : a.options)
      sub->add_option("--" + o.name, st.options[o.name],
                      fmt::format("{} (default {})", o.help, o.default_value))
          ->check(CLI::Range(std::int64_t{0}, std::int64_t{4'000'000'000}));
    if (a.seeded) sub->add_option("-s,--seed", st.seed, "seed of the input (default 1)");
    std::string all;
    for (const auto& v : a.variants) all += (all.empty() ? "" : ",") + v;
    sub->add_option("--variants", st.variants,
                    fmt::format("comma-separated variants to run (default all: {})", all))
        ->delimiter(',');
    sub->add_option("--reps", st.reps, "timed repetitions per variant (default 3)")
        ->check(CLI::Range(1, 1000));
    sub->add_option("--json", st.json, "also write the results as JSON to this file");
    sub->add_option("--workers", st.workers,
                    "threads per PE that run the kernels' loops and tasks (sets "
                    "MAILROOM_WORKERS; default 1)")
        ->check(CLI::Range(1, 1024));
    sub->add_flag("--quick", st.quick,
                  a.quick_table > 0
                      ? fmt::format("small sizes for tests ({} {} and {} table elements per PE)",
                                    a.quick_n, a.n_means, a.quick_table)
                  : !a.n_help.empty()
                      ? fmt::format("small sizes for tests (-n {})", a.quick_n)
                      : fmt::format("small sizes for tests ({} {} per PE)", a.quick_n, a.n_means));
    if (!a.local_floor.empty())
      sub->footer("The variant local, the floor in the table's \"vs local\" column: " +
                  a.local_floor + ".");
    subs[a.name] = sub;
  }
  // Name the culprit when the first word is no app (CLI11 would only say one is required).
  if (argc > 1 && argv[1][0] != '-' &&
      std::none_of(apps.begin(), apps.end(), [&](const app_info& a) { return a.name == argv[1]; }))
    usage_error(fmt::format("unknown app '{}' (see --help for the list)", argv[1]));
  if (!parse_command_line(cli, argc, argv, "", " (see --help)")) return 0;
  const app_info* app = nullptr;
  for (const auto& a : apps)
    if (subs[a.name]->parsed()) app = &a;
  if (st.variants.empty()) st.variants = app->variants;
  for (const auto& v : st.variants)
    if (std::find(app->variants.begin(), app->variants.end(), v) == app->variants.end())
      usage_error(fmt::format("unknown variant '{}' for {} (known: {})", v, app->name,
                              fmt::join(app->variants, ", ")));
  sizes sz;
  sz.n = st.n >= 0 ? st.n : (st.quick ? app->quick_n : app->default_n);
  sz.table_per_pe = st.table >= 0 ? st.table : (st.quick ? app->quick_table : app->default_table);
  if (st.n < 0 && app->n_per_table > 0) sz.n = app->n_per_table * sz.table_per_pe;
  sz.nnz_per_row = st.nnz >= 0 ? st.nnz : (st.quick ? app->quick_nnz : app->default_nnz);
  sz.matrix = st.matrix;
  sz.seed = st.seed;
  sz.variants = st.variants;
  for (const auto& o : app->options) {
    const auto given = subs[app->name]->get_option("--" + o.name);
    sz.options[o.name] =
        given->count() > 0 ? st.options[o.name] : (st.quick ? o.quick_value : o.default_value);
  }
  // Refuse sizes this machine cannot hold before allocating them.
  const double need =
      32.0 * static_cast<double>(sz.n) + 16.0 * static_cast<double>(sz.table_per_pe);
  const double have = physical_memory_bytes();
  if (need > have)
    usage_error(
        fmt::format("{} {}s and {} table elements per PE need about {:.1f} GiB per PE; "
                    "this machine has {:.1f} GiB",
                    sz.n, app->op, sz.table_per_pe, need / (1 << 30), have / (1 << 30)));

  if (st.workers > 0) setenv("MAILROOM_WORKERS", std::to_string(st.workers).c_str(), 1);
  runtime rt(argc, argv);
  const bool root = this_pe().rank() == 0;
  auto bench = app->make();
  skipped_list skipped;
  std::erase_if(st.variants, [&](const std::string& v) {
    std::string why = bench->unavailable(v);
    if (why.empty()) return false;
    skipped.emplace_back(v, std::move(why));
    return true;
  });
  if (st.variants.empty())
    usage_error(fmt::format("{}: no variant asked for can run here ({}: {})", app->name,
                            skipped.front().first, skipped.front().second));
  sz.variants = st.variants;
  bench->prepare(sz);
  // -n is no count per PE for some apps (stencil: the grid's side): the table names it then.
  if (!app->n_help.empty()) sz.options["n"] = sz.n;
  // ns per operation: the app's own count when it has one (e.g. nonzeros), the largest PE's.
  if (const std::int64_t ops = bench->ops_per_pe(); ops >= 0) sz.n = all_reduce(ops, max<>{});
  // Repetitions run in rounds, the order of the variants rotated every round, so that no
  // variant always runs first or last on a machine whose speed drifts.
  std::vector<variant_result> results;
  for (const auto& v : st.variants) results.push_back({v, {}, true, {}, {}, 1});
  const std::size_t nv = results.size();
  round_trips trips;
  trips.before_s = round_trip_seconds();
  for (int rep = 0; rep < st.reps; ++rep) {
    for (std::size_t k = 0; k < nv; ++k) {
      variant_result& r = results[(static_cast<std::size_t>(rep) + k) % nv];
      if (!r.passed) continue;  // a failed variant is not run again
      bench->reset();
      barrier();
      statistics traffic = stats();
      global_view_statistics view = global_view_totals();
      const double t0 = wtime();
      bench->run(r.name);
      barrier();
      const double dt = all_reduce(wtime() - t0, max<>{});
      traffic = stats() -= traffic;
      r.traffic += traffic;
      r.view += global_view_totals() -= view;
      r.passed = bench->check(r.name);  // a failed check is never timed as a success
      if (r.passed) {
        r.time_divisor = bench->time_divisor(r.name);
        r.seconds.push_back(dt / r.time_divisor);
        r.result = bench->result();
      }
      if (root && dt > 1.0)
        std::fprintf(stderr, "[%s] %s: repetition %d of %d took %.2f s\n", app->name.c_str(),
                     r.name.c_str(), rep + 1, st.reps, dt);
    }
  }
  trips.after_s = round_trip_seconds();
  const std::int64_t rss = all_reduce(peak_rss_bytes(), max<>{});
  const auto pool = all_reduce(static_cast<std::int64_t>(aggregation().peak_pool_bytes), max<>{});
  const std::vector<traffic_summary> traffic = summarise_traffic(results, st.reps);
  if (root) {
    print_table(*app, sz, results, st.reps, traffic, skipped);
    fmt::print(
        "peak RSS {:.1f} MiB, aggregation buffers peak {:.2f} MiB (budget {:.0f} MiB), "
        "slowest PE each\n",
        static_cast<double>(rss) / (1 << 20), static_cast<double>(pool) / (1 << 20),
        static_cast<double>(current_config().budget_bytes) / (1 << 20));
    if (num_pes() > 1)
      fmt::print(
          "round trip PE 0 <-> PE {}: {:.2f} us before, {:.2f} us after (compare runs "
          "whose round trips agree)\n",
          num_pes() - 1, trips.before_s * 1e6, trips.after_s * 1e6);
    if (!st.json.empty()) write_json(st, *app, sz, results, rss, pool, trips, traffic, skipped);
  }
  bench.reset();
  const bool all_passed =
      std::all_of(results.begin(), results.end(), [](const auto& r) { return r.passed; });
  return all_passed ? 0 : 1;
}

std::vector<std::int64_t> to_owners(const std::vector<std::int64_t>& values,
                                    const std::function<int(std::int64_t)>& owner) {
  return to_owners(std::span<const std::int64_t>(values), owner);
}

bool is_distributed_permutation(const std::vector<std::int64_t>& part, std::int64_t n) {
  const std::int64_t block = std::max<std::int64_t>((n + num_pes() - 1) / num_pes(), 1);
  std::int64_t wrong = 0;
  std::vector<std::int64_t> valid;
  valid.reserve(part.size());
  for (const std::int64_t v : part) {
    if (v < 0 || v >= n)
      ++wrong;
    else
      valid.push_back(v);
  }
  const std::int64_t base = block * this_pe().rank();
  std::vector<std::int64_t> found(static_cast<std::size_t>(block), 0);
  for (const std::int64_t v :
       to_owners(valid, [block](std::int64_t v) { return static_cast<int>(v / block); }))
    ++found[static_cast<std::size_t>(v - base)];
  for (std::int64_t i = 0; i < block; ++i)
    wrong += found[static_cast<std::size_t>(i)] != (base + i < n ? 1 : 0);
  return all_reduce(wrong) == 0;
}

}  // namespace mailroom::apps
