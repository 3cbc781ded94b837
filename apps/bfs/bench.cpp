// SPDX-License-Identifier: MIT
// mailroom-bench bfs: Graph500's BFS benchmark by its rules. The graph is generated and built
// (kernel 1, timed) once; every variant searches from the same search keys (kernel 2, each
// search timed from a barrier to a barrier, the slowest PE), each search validated by the
// specification's checks; the report gives Graph500's statistics, TEPS as their harmonic mean.
#include "bfs/graph500.hpp"
#include "common/driver.hpp"

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

namespace mailroom::apps {

namespace {

using namespace bfs;  // NOLINT(google-build-using-namespace): this file is bfs's driver

const std::vector<std::string> k_variants = {"naive",  "conveyor", "selector",
                                             "lambda", "async",    "local"};

struct search_series {
  std::string name;
  std::vector<double> seconds, validate_seconds;
  std::vector<std::int64_t> edges;
  std::vector<int> depth;
  check failed = check::none;
  std::int64_t messages = 0, combined = 0, combined_at_hops = 0;  // all PEs, all searches
  [[nodiscard]] std::vector<double> teps() const {
    std::vector<double> t;
    for (std::size_t k = 0; k < seconds.size(); ++k)
      t.push_back(static_cast<double>(edges[k]) / seconds[k]);
    return t;
  }
};

nlohmann::json to_json(const summary& s) {
  return {{"min", s.min},
          {"first_quartile", s.first_quartile},
          {"median", s.median},
          {"third_quartile", s.third_quartile},
          {"max", s.max},
          {"mean", s.mean},
          {"stddev", s.stddev},
          {"harmonic_mean", s.harmonic_mean},
          {"harmonic_stddev", s.harmonic_stddev}};
}

// Graph500's output for one implementation, in its reference code's keys.
void print_graph500(const graph_spec& spec, int roots, double generation_s, double construction_s,
                    const search_series& r) {
  fmt::print("SCALE: {}\nedgefactor: {}\nNBFS: {}\ngraph_generation: {:g}\n", spec.scale,
             spec.edge_factor, roots, generation_s);
  fmt::print("num_mpi_processes: {}\nconstruction_time: {:g}\n", num_pes(), construction_s);
  const auto block = [](const char* what, const summary& s, bool harmonic) {
    fmt::print(
        "bfs  min_{0}: {1:g}\nbfs  firstquartile_{0}: {2:g}\nbfs  median_{0}: {3:g}\n"
        "bfs  thirdquartile_{0}: {4:g}\nbfs  max_{0}: {5:g}\n",
        what, s.min, s.first_quartile, s.median, s.third_quartile, s.max);
    if (harmonic)
      fmt::print("bfs  harmonic_mean_{0}: {1:g}\nbfs  harmonic_stddev_{0}: {2:g}\n", what,
                 s.harmonic_mean, s.harmonic_stddev);
    else
      fmt::print("bfs  mean_{0}: {1:g}\nbfs  stddev_{0}: {2:g}\n", what, s.mean, s.stddev);
  };
  block("time", summarise(r.seconds), false);
  std::vector<double> edges(r.edges.begin(), r.edges.end());
  block("nedge", summarise(edges), false);
  block("TEPS", summarise(r.teps()), true);
  block("validate", summarise(r.validate_seconds), false);
}

// A count the launcher gives in one of `names` (1 when none does: a run without one).
std::int64_t launcher_count(std::initializer_list<const char*> names) {
  for (const char* v : names)
    if (const char* s = std::getenv(v)) return std::max<std::int64_t>(std::atoll(s), 1);
  return 1;
}

}  // namespace

int run_graph500(int argc, char** argv) {
  CLI::App cli{
      "mailroom-bench bfs: Graph500's BFS benchmark (specification 2.0, \"Search\"). A Kronecker "
      "graph of 2^scale vertices and edge-factor x 2^scale edge tuples (initiator 0.57, 0.19, "
      "0.19, 0.05; vertex numbers permuted), or Erdős–Rényi's (--graph er), is generated and "
      "built (kernel 1); each variant searches from the same 64 random search keys (kernel 2), "
      "every search validated by the specification's checks; TEPS per search (input tuples of "
      "the component over the search's time) and their harmonic mean, as Graph500 reports it.\n"
      "Run under mpirun, e.g.: mpirun -n 2 mailroom-bench bfs --scale 18"};
  graph_spec spec;
  std::string kind = "kronecker", json_file;
  int roots = 64;
  bool quick = false, full_report = false;
  std::vector<std::string> variants;
  cli.add_option("--scale", spec.scale, "log2 of the vertices (default 18)")
      ->check(CLI::Range(1, 40));
  cli.add_option("--edge-factor", spec.edge_factor, "edge tuples per vertex (default 16)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 20));
  cli.add_option("--graph", kind, "kronecker (Graph500's, default) or er (Erdős–Rényi)")
      ->check(CLI::IsMember({"kronecker", "er"}));
  cli.add_option("--roots", roots, "search keys (default 64, Graph500's NBFS)")
      ->check(CLI::Range(1, 1 << 20));
  cli.add_option("-s,--seed", spec.seed, "seed of the graph and the search keys (default 1)");
  cli.add_option("--variants", variants,
                 fmt::format("comma-separated variants to run (default all: {})",
                             fmt::join(k_variants, ",")))
      ->delimiter(',')
      ->check(CLI::IsMember(k_variants));
  cli.add_option("--json", json_file, "also write the results as JSON to this file");
  cli.add_flag("--graph500", full_report,
               "also print each variant's statistics in the reference code's format");
  cli.add_flag("--quick", quick, "small sizes for tests (scale 10, 8 search keys)");
  cli.footer(
      "Variants: naive (level-synchronous, remote compare-and-swap), conveyor, selector and "
      "lambda (level-synchronous, messages per level), async (one self-sending mailbox, visits "
      "combined at the sender by min level: no levels kept in step), local (the floor: one PE's "
      "serial search over the whole graph, its time divided by P in the vs local column).");
  if (!parse_command_line(cli, argc, argv, "bfs: ", " (see bfs --help)")) return 0;
  if (quick) {
    if (cli.get_option("--scale")->count() == 0) spec.scale = 10;
    if (cli.get_option("--roots")->count() == 0) roots = 8;
  }
  spec.kronecker = kind == "kronecker";
  if (variants.empty()) variants = k_variants;
  const bool with_local = std::find(variants.begin(), variants.end(), "local") != variants.end();
  {
    // Refuse what this node cannot hold: per PE its share of the tuples (both directions, and
    // the checker's reads) and of the vertices, and the whole graph for local; times the PEs
    // the launcher put on this node.
    const double m = static_cast<double>(spec.edges()), nv = static_cast<double>(spec.vertices());
    const double P = static_cast<double>(launcher_count({"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}));
    const double here =
        static_cast<double>(launcher_count({"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"}));
    const double per_pe = (72.0 * m + 96.0 * nv) / P + (with_local ? 32.0 * m + 16.0 * nv : 0.0);
    const double have = physical_memory_bytes();
    if (per_pe * here > have)
      usage_error(fmt::format(
          "bfs: scale {} with edge factor {} needs about {:.1f} GiB on this node ({:g} of {:g} "
          "PEs{}); it has {:.1f} GiB",
          spec.scale, spec.edge_factor, per_pe * here / (1 << 30), here, P,
          with_local ? ", with local's whole graph on each" : "", have / (1 << 30)));
  }

  runtime rt(argc, argv);
  const bool is_root = this_pe().rank() == 0;
  barrier();
  double t0 = wtime();
  std::vector<edge> tuples = generate(spec);
  barrier();
  const double generation_s = all_reduce(wtime() - t0, max<>{});
  t0 = wtime();
  const graph g = construct(spec, std::move(tuples));
  barrier();
  const double construction_s = all_reduce(wtime() - t0, max<>{});
  const std::vector<std::int64_t> keys = search_keys(g, roots, spec.seed);
  if (keys.empty()) {
    if (is_root) fmt::print(stderr, "mailroom-bench: bfs: no vertex has a neighbour\n");
    return 1;
  }
  whole_graph whole;
  if (with_local) whole = gather_whole(g);

  symmetric_scope scope;
  symmetric_array<std::int64_t> parent(g.most_local());
  std::vector<std::int64_t> serial;  // local's parents, of every vertex
  validator validate(g);
  std::vector<search_series> results;
  for (const auto& v : variants) results.push_back({v, {}, {}, {}, {}, check::none, 0, 0});
  const std::size_t nv = results.size();
  const pe me = this_pe();
  // Searches in rounds, one per key, the variants' order rotated every round (no variant always
  // first on a machine whose speed drifts).
  for (std::size_t k = 0; k < keys.size(); ++k)
    for (std::size_t j = 0; j < nv; ++j) {
      search_series& r = results[(k + j) % nv];
      if (r.failed != check::none) continue;  // a failed variant is not run again
      std::fill(parent.begin(), parent.end(), -1);
      barrier();
      const statistics before = stats();
      t0 = wtime();
      if (r.name == "naive")
        bfs::naive(g, keys[k], parent);
      else if (r.name == "conveyor")
        bfs::conveyor(g, keys[k], parent);
      else if (r.name == "selector")
        bfs::selector(g, keys[k], parent);
      else if (r.name == "lambda")
        bfs::lambda(g, keys[k], parent);
      else if (r.name == "async")
        bfs::async(g, keys[k], parent);
      else
        bfs::local(whole, keys[k], serial);
      barrier();
      const double dt = all_reduce(wtime() - t0, max<>{});
      statistics traffic = stats();
      traffic -= before;
      r.messages += all_reduce(traffic.messages_sent);
      r.combined += all_reduce(traffic.messages_combined);
      r.combined_at_hops += all_reduce(traffic.messages_combined_at_hops);
      if (r.name == "local")
        for (std::size_t l = 0; l < g.local_vertices(); ++l)
          parent[l] = serial[static_cast<std::size_t>(g.dist.global(me, l))];
      t0 = wtime();
      const validation val =
          validate(keys[k], std::span<const std::int64_t>(parent.data(), g.local_vertices()));
      r.validate_seconds.push_back(all_reduce(wtime() - t0, max<>{}));
      r.failed = val.failed;
      if (val.failed != check::none) {
        if (is_root)
          fmt::print(stderr,
                     "mailroom-bench: bfs: {} FAILED the validation of search {} (root "
                     "{}): {}\n",
                     r.name, k + 1, keys[k], describe(val.failed));
        continue;
      }
      r.seconds.push_back(dt);
      r.edges.push_back(val.edges);
      r.depth.push_back(val.depth);
    }

  const auto hm_teps = [](const search_series& r) { return summarise(r.teps()).harmonic_mean; };
  double local_hm = 0;
  for (const auto& r : results)
    if (r.name == "local" && r.failed == check::none) local_hm = hm_teps(r);
  const int P = num_pes();
  if (is_root) {
    fmt::print(
        "bfs: {} PEs (routing {}), {} scale {}, edge factor {} ({} vertices, {} tuples), "
        "{} search keys, seed {}\n",
        P, routing_in_use(), spec.kronecker ? "Kronecker" : "Erdős–Rényi", spec.scale,
        spec.edge_factor, spec.vertices(), spec.edges(), keys.size(), spec.seed);
    fmt::print("graph generation {:.3f} s, construction (kernel 1) {:.3f} s\n", generation_s,
               construction_s);
    fmt::print("{:<9} {:>13} {:>11} {:>11} {:>11} {:>11} {:>9} {:>13}  {}\n", "variant",
               "harmonic TEPS", "min TEPS", "median", "max TEPS", "mean s", "vs local",
               "msgs/search", "validation");
    for (const auto& r : results) {
      if (r.failed != check::none) {
        fmt::print("{:<9} {:>13} {:>11} {:>11} {:>11} {:>11} {:>9} {:>13}  FAILED: {}\n", r.name,
                   "-", "-", "-", "-", "-", "-", "-", describe(r.failed));
        continue;
      }
      const summary t = summarise(r.teps()), s = summarise(r.seconds);
      fmt::print(
          "{:<9} {:>13.4g} {:>11.4g} {:>11.4g} {:>11.4g} {:>11.5f} {:>9} {:>13}  {} of {} "
          "PASSED\n",
          r.name, t.harmonic_mean, t.min, t.median, t.max, s.mean,
          local_hm > 0
              ? fmt::format("{:.2f}x", r.name == "local" ? 1.0 : local_hm * P / t.harmonic_mean)
              : "-",
          r.messages / static_cast<std::int64_t>(keys.size()), r.seconds.size(), keys.size());
    }
    const summary edges = [&] {
      for (const auto& r : results)
        if (!r.edges.empty()) return summarise({r.edges.begin(), r.edges.end()});
      return summary{};
    }();
    fmt::print(
        "input tuples in the searched component (Graph500's nedge): min {:g}, median {:g}, "
        "max {:g}\n",
        edges.min, edges.median, edges.max);
    for (const auto& r : results)
      if (r.combined > 0)
        fmt::print("{}: {} visits per search combined at the sender, {} at hops\n", r.name,
                   r.combined / static_cast<std::int64_t>(keys.size()),
                   r.combined_at_hops / static_cast<std::int64_t>(keys.size()));
    if (with_local)
      fmt::print(
          "local: one PE's serial search over the whole graph; vs local is its harmonic "
          "TEPS x P over the variant's\n");
    if (simulated())
      fmt::print("{}: the times are its clock, not this computer's\n", mpi_library());
    if (full_report)
      for (const auto& r : results)
        if (r.failed == check::none) {
          fmt::print("\n# {}\n", r.name);
          print_graph500(spec, static_cast<int>(keys.size()), generation_s, construction_s, r);
        }
    std::fflush(stdout);
    if (!json_file.empty()) {
      nlohmann::json j;
      j["app"] = "bfs";
      j["pes"] = P;
      j["mpi"] = mpi_library();
      j["routing"] = routing_in_use();
      j["graph"] = {{"kind", spec.kronecker ? "kronecker" : "er"},
                    {"scale", spec.scale},
                    {"edge_factor", spec.edge_factor},
                    {"vertices", spec.vertices()},
                    {"tuples", spec.edges()}};
      j["seed"] = spec.seed;
      j["search_keys"] = keys;
      j["graph_generation_s"] = generation_s;
      j["construction_s"] = construction_s;
      j["variants"] = nlohmann::json::array();
      for (const auto& r : results) {
        nlohmann::json v = {{"name", r.name},
                            {"check", r.failed == check::none ? "PASSED" : "FAILED"},
                            {"messages_per_search", r.messages / std::ssize(keys)},
                            {"combined_per_search", r.combined / std::ssize(keys)},
                            {"combined_at_hops_per_search", r.combined_at_hops / std::ssize(keys)}};
        if (r.failed != check::none) {
          v["failed_check"] = describe(r.failed);
        } else {
          v["seconds"] = r.seconds;
          v["nedge"] = r.edges;
          v["depth"] = r.depth;
          v["time"] = to_json(summarise(r.seconds));
          v["teps"] = to_json(summarise(r.teps()));
          v["validate_s"] = to_json(summarise(r.validate_seconds));
        }
        j["variants"].push_back(v);
      }
      std::ofstream out(json_file);
      if (!out) MAILROOM_FAIL("cannot write the JSON file '{}'", json_file);
      out << j.dump(2) << '\n';
    }
  }
  const bool passed = std::all_of(results.begin(), results.end(),
                                  [](const auto& r) { return r.failed == check::none; });
  return passed ? 0 : 1;
}

}  // namespace mailroom::apps
