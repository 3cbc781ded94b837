// SPDX-License-Identifier: MIT
// MAILROOM_SIM: the simulated machine (mailroom/simulate.hpp) parsed from its description, read
// from the environment, and described back.
#include "mailroom/simulate.hpp"

#include "mailroom/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

namespace mailroom::transport::sim {

namespace {

// ---- parsing -----------------------------------------------------------------------------------
bool parse_double(std::string_view s, double& out) {
  const std::string t(s);
  char* end = nullptr;
  errno = 0;
  out = std::strtod(t.c_str(), &end);
  return !t.empty() && end == t.c_str() + t.size() && errno == 0 && std::isfinite(out);
}
bool parse_u64(std::string_view s, std::uint64_t& out) {
  std::uint64_t mult = 1;
  if (!s.empty() && (s.back() == 'K' || s.back() == 'k')) mult = 1ull << 10;
  if (!s.empty() && (s.back() == 'M' || s.back() == 'm')) mult = 1ull << 20;
  if (mult > 1) s.remove_suffix(1);
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return false;
  out *= mult;
  return true;
}

}  // namespace

}  // namespace mailroom::transport::sim

namespace mailroom {

simulated_machine simulated_machine::parse(std::string_view spec) {
  simulated_machine m;
  const std::string whole(spec);
  auto bad = [&](std::string_view part, std::string_view why) {
    MAILROOM_FAIL(
        "MAILROOM_SIM=\"{}\": {} in \"{}\" (expected P[xN][,key=value...], keys seed, "
        "latency, node_latency (us), bandwidth, node_bandwidth (GB/s), jitter, stack, stall (s))",
        whole, why, part);
  };
  std::size_t comma = spec.find(',');
  std::string_view head = spec.substr(0, comma);
  const std::size_t x = head.find('x');
  std::uint64_t pes = 0, per_node = 1;
  if (!transport::sim::parse_u64(head.substr(0, x), pes) || pes < 1 || pes > (1u << 20))
    bad(head, "the number of PEs is not a whole number from 1 to 1048576");
  if (x != std::string_view::npos &&
      (!transport::sim::parse_u64(head.substr(x + 1), per_node) || per_node < 1))
    bad(head, "the PEs per node are not a whole number of at least 1");
  m.pes = static_cast<int>(pes);
  m.per_node = static_cast<int>(std::min<std::uint64_t>(per_node, pes));
  while (comma != std::string_view::npos) {
    spec.remove_prefix(comma + 1);
    comma = spec.find(',');
    const std::string_view kv = spec.substr(0, comma);
    const std::size_t eq = kv.find('=');
    if (eq == std::string_view::npos) bad(kv, "no '='");
    const std::string_view key = kv.substr(0, eq), value = kv.substr(eq + 1);
    double d = 0;
    std::uint64_t u = 0;
    if (key == "seed") {
      if (!transport::sim::parse_u64(value, u)) bad(kv, "the seed is not a whole number");
      m.seed = u;
    } else if (key == "stack") {
      if (!transport::sim::parse_u64(value, u) || u < 65536) bad(kv, "the stack is below 64K");
      m.stack_bytes = u;
    } else if (key == "stall") {
      if (!transport::sim::parse_double(value, d) || d <= 0) bad(kv, "not a number of seconds");
      m.stall_seconds = d;
    } else if (key == "jitter") {
      if (!transport::sim::parse_double(value, d) || d < 0 || d > 10)
        bad(kv, "jitter not in 0..10");
      m.jitter = d;
    } else if (key == "latency" || key == "node_latency") {
      if (!transport::sim::parse_double(value, d) || d < 0) bad(kv, "not a latency");
      (key == "latency" ? m.network_latency : m.node_latency) = d * 1e-6;
    } else if (key == "bandwidth" || key == "node_bandwidth") {
      if (!transport::sim::parse_double(value, d) || d <= 0) bad(kv, "not a bandwidth");
      (key == "bandwidth" ? m.network_bandwidth : m.node_bandwidth) = d * 1e9;
    } else {
      bad(kv, "unknown key");
    }
  }
  return m;
}

std::optional<simulated_machine> simulated_machine::from_environment() {
  const char* s = std::getenv("MAILROOM_SIM");
  if (s == nullptr || *s == '\0') return std::nullopt;
  return parse(s);
}

std::string simulated_machine::describe() const {
  const int nodes = (pes + per_node - 1) / per_node;
  return fmt::format(
      "{} PEs, {} per node ({} nodes), network {:g} us {:g} GB/s, node {:g} us "
      "{:g} GB/s, jitter {:g}, seed {}",
      pes, per_node, nodes, network_latency * 1e6, network_bandwidth / 1e9, node_latency * 1e6,
      node_bandwidth / 1e9, jitter, seed);
}
}  // namespace mailroom
