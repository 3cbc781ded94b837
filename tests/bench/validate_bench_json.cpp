// SPDX-License-Identifier: MIT
// Validates the JSON that mailroom-bench wrote: it parses, and holds what the run asked for and
// what it says (machine, PEs, sizes, seed, every repetition, consistent statistics, memory, each
// variant's time against the local floor and its result).
// Usage: validate_bench_json FILE APP PES REPS SEED VARIANT,VARIANT,...
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {
int failures = 0;
void expect(bool ok, const std::string& what) {
  if (!ok) {
    std::fprintf(stderr, "validate_bench_json: %s\n", what.c_str());
    ++failures;
  }
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 7) {
    std::fprintf(stderr, "usage: %s FILE APP PES REPS SEED VARIANTS\n", argv[0]);
    return 2;
  }
  std::ifstream in(argv[1]);
  if (!in) {
    std::fprintf(stderr, "validate_bench_json: cannot open %s\n", argv[1]);
    return 1;
  }
  nlohmann::json j;
  try {
    in >> j;
  } catch (const nlohmann::json::exception& e) {
    std::fprintf(stderr, "validate_bench_json: does not parse: %s\n", e.what());
    return 1;
  }
  const int pes = std::stoi(argv[3]), reps = std::stoi(argv[4]);
  const long long seed = std::stoll(argv[5]);
  std::vector<std::string> variants;
  std::stringstream list(argv[6]);
  for (std::string v; std::getline(list, v, ',');) variants.push_back(v);

  expect(j.value("app", "") == argv[2], "app is not " + std::string(argv[2]));
  expect(j.value("pes", -1) == pes, "pes is not " + std::to_string(pes));
  expect(j.value("reps", -1) == reps, "reps is not " + std::to_string(reps));
  expect(j.value("seed", -1LL) == seed, "seed is not " + std::to_string(seed));
  expect(!j["machine"].value("hostname", "").empty(), "machine.hostname is empty");
  expect(j["machine"].value("cores", 0) >= 1, "machine.cores is not positive");
  expect(j["machine"].value("mpi", "").find("MPI") != std::string::npos,
         "machine.mpi does not name the MPI library");
  for (const char* when : {"before", "after"}) {
    const double us = j["machine"]["round_trip_us"].value(when, -1.0);
    expect(pes > 1 ? us > 0 : us == 0, std::string("machine.round_trip_us.") + when + " is not " +
                                           (pes > 1 ? "positive" : "0 (one PE)"));
  }
  expect(j["sizes"].value("ops_per_pe", 0LL) > 0, "sizes.ops_per_pe is not positive");
  expect(j["sizes"].value("table_per_pe", 0LL) > 0, "sizes.table_per_pe is not positive");
  expect(j["memory"].value("peak_rss_bytes_max_pe", 0LL) > 0, "peak RSS missing");
  const long long pool = j["memory"].value("aggregation_peak_bytes_max_pe", -1LL);
  expect(pool > 0 && pool <= j["config"].value("budget_bytes", 0LL),
         "aggregation peak missing or above the budget");
  const long long slots = j["config"].value("pool_slots", -1LL);
  expect(slots >= 0 && slots <= j["config"].value("shared_slots", -1LL) * std::max(pes - 1, 4),
         "pool_slots missing or above shared_slots per other PE");
  const long long node_buffer = j["config"].value("node_buffer_bytes", -1LL);
  expect(node_buffer >= 256 && node_buffer <= j["config"].value("buffer_bytes", -1LL),
         "node_buffer_bytes missing, below 256 or above buffer_bytes");
  const auto& vs = j["variants"];
  // The floor's median, when local ran: every variant's vs_local is its median over this one.
  const bool with_local = std::find(variants.begin(), variants.end(), "local") != variants.end();
  double local_median = 0;
  for (const auto& v : vs)
    if (v.value("name", "") == "local") local_median = v.value("median_s", 0.0);
  expect(vs.is_array() && vs.size() == variants.size(), "variants has the wrong length");
  for (std::size_t i = 0; i < variants.size() && i < vs.size(); ++i) {
    const auto& v = vs[i];
    const std::string name = v.value("name", "");
    expect(name == variants[i], "variant " + std::to_string(i) + " is not " + variants[i]);
    expect(v.value("check", "") == "PASSED", name + " did not pass its check");
    const auto& s = v["seconds"];
    expect(s.is_array() && static_cast<int>(s.size()) == reps, name + ": not one time per rep");
    double lo = 1e300, hi = -1;
    for (const auto& t : s) {
      lo = std::min(lo, t.get<double>());
      hi = std::max(hi, t.get<double>());
    }
    expect(v.value("min_s", -1.0) == lo && v.value("max_s", -1.0) == hi,
           name + ": min/max do not match the repetitions");
    const double med = v.value("median_s", -1.0);
    expect(med >= lo && med <= hi, name + ": median outside [min, max]");
    const double ns = v.value("ns_per_op_per_pe", -1.0);
    const double ops = j["sizes"].value("ops_per_pe", 1.0);
    expect(ns > 0 && std::abs(ns - med * 1e9 / ops) <= 1e-6 * ns, name + ": ns per op is off");
    expect(v.contains("speedup_vs_naive"), name + ": no speed-up over naive");
    if (with_local) {
      const double vs_local = v.value("vs_local", -1.0);
      expect(vs_local > 0 && local_median > 0 &&
                 std::abs(vs_local - med / local_median) <= 1e-9 * vs_local,
             name + ": vs_local is missing, not positive or not its median over local's");
      if (name == "local") expect(vs_local == 1.0, "local: vs_local is not 1");
    } else {
      expect(!v.contains("vs_local"), name + ": vs_local without a local variant");
    }
    // What the variant computed, from its output: a histogram's counts add up to every update.
    expect(
        v.contains("result") && v["result"].is_string() && !v["result"].get<std::string>().empty(),
        name + ": no result");
    if (std::string(argv[2]) == "histogram")
      expect(v.value("result", "") ==
                 "total " + std::to_string(j["sizes"].value("ops_per_pe", 0LL) * pes),
             name + ": result is not the total of every PE's updates");
    // mailroom's counters: a histogram update is one message through mailroom in the conveyor
    // and selector variants, none in naive, counted again on each link it is forwarded over
    // (node routing); the links matrix adds up to the messages.
    const auto& t = v["traffic"];
    const long long pes = j.value("pes", 0LL);
    const long long messages = t.value("messages", -1LL);
    const long long forwarded = t.value("forwarded_messages", -1LL);
    const bool no_mailroom = name == "naive" || name == "local";  // one-sided, or none at all
    const long long expected = no_mailroom ? 0 : j["sizes"].value("ops_per_pe", 0LL) * pes;
    expect(forwarded >= 0 && messages - forwarded == expected,
           name + ": traffic.messages less the forwarded is " +
               std::to_string(messages - forwarded) + ", expected " + std::to_string(expected));
    if (forwarded == 0)
      expect(t.value("bytes", -1LL) == 8 * expected, name + ": traffic.bytes is not 8 per message");
    const auto& net = t["network"];
    expect(
        net.value("buffers", -1LL) >= 0 && net.value("buffers", -1LL) <= t.value("buffers", -1LL),
        name + ": traffic.network.buffers out of range");
    const double fill = t.value("mean_fill", -1.0);
    expect(no_mailroom ? fill == 0 : (fill > 0 && fill <= 1),
           name + ": traffic.mean_fill out of range");
    long long linked = 0;
    const auto& links = t["links"];
    expect(links.is_array() && static_cast<long long>(links.size()) == pes,
           name + ": traffic.links is not P x P");
    for (const auto& row : links) {
      expect(row.is_array() && static_cast<long long>(row.size()) == pes,
             name + ": a row of traffic.links is not P long");
      for (const auto& x : row) linked += x.get<long long>();
    }
    expect(linked == messages, name + ": traffic.links does not add up to traffic.messages");
  }
  if (failures == 0)
    std::printf("bench JSON valid: %zu variants, %d reps\n", variants.size(), reps);
  return failures == 0 ? 0 : 1;
}
