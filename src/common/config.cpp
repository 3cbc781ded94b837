// SPDX-License-Identifier: MIT
// Parses and prints the MAILROOM_* tables of config.hpp, and rejects MAILROOM_* names that
// neither holds.
#include "mailroom/config.hpp"

#include "common/environment.hpp"

#include "mailroom/error.hpp"

#include "common/pe_local.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

// (<unistd.h> declares it only with _GNU_SOURCE.)
extern char** environ;  // NOLINT(readability-redundant-declaration)

namespace mailroom {

namespace {
config g_config;
MAILROOM_PE_LOCAL(g_config);

struct limits {
  std::uint64_t min, max;
};

limits limits_of(std::string_view env) {
  if (env == "MAILROOM_BUFFER_BYTES") return {256, 16ull << 20};
  if (env == "MAILROOM_NODE_BUFFER_BYTES") return {0, 16ull << 20};
  if (env == "MAILROOM_SHARED_SLOTS") return {0, 1u << 16};
  if (env == "MAILROOM_CREDITS") return {1, 1u << 12};
  if (env == "MAILROOM_RECEIVES_POSTED") return {1, 1u << 16};
  if (env == "MAILROOM_BUDGET_BYTES") return {1ull << 16, 1ull << 50};
  if (env == "MAILROOM_SYMMETRIC_HEAP_BYTES") return {1ull << 20, 1ull << 44};
  if (env == "MAILROOM_WATCHDOG") return {0, 7ull * 24 * 3600};
  if (env == "MAILROOM_WARN_AFTER") return {0, 7ull * 24 * 3600};
  if (env == "MAILROOM_IDLE_SLEEP_NS") return {0, 1000000000};
  if (env == "MAILROOM_IDLE_FLUSH") return {0, 1ull << 40};
  if (env == "MAILROOM_STATS") return {0, 1};
  if (env == "MAILROOM_REDUCE_SLOTS") return {1, 1u << 24};
  if (env == "MAILROOM_NODE_SIZE") return {0, 1u << 20};
  if (env == "MAILROOM_GLOBAL_PAGE_BYTES") return {8, 1ull << 30};
  if (env == "MAILROOM_GLOBAL_CACHE_BYTES") return {16, 1ull << 44};
  return {0, std::numeric_limits<std::uint64_t>::max()};
}
// A value given by its name, one of name(0..last) (MAILROOM_ROUTING, MAILROOM_PROGRESS).
bool parse_name(const std::string& text, const char* (*name)(std::uint64_t), std::uint64_t last,
                std::uint64_t& out) {
  for (std::uint64_t v = 0; v <= last; ++v)
    if (text == name(v)) {
      out = v;
      return true;
    }
  return false;
}
}  // namespace

namespace detail {
bool parse_config_value(const char* kind, const std::string& text, std::uint64_t& out) {
  if (text.empty()) return false;
  if (std::strcmp(kind, "routing") == 0)
    return parse_name(text, routing_name, static_cast<std::uint64_t>(routing::hypercube), out);
  if (std::strcmp(kind, "progress") == 0)
    return parse_name(text, progress_mode_name, static_cast<std::uint64_t>(progress_mode::thread),
                      out);
  if (std::strcmp(kind, "cache") == 0)
    return parse_name(text, cache_mode_name, static_cast<std::uint64_t>(cache_mode::off), out);
  std::size_t i = 0;
  std::uint64_t v = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    const std::uint64_t d = static_cast<std::uint64_t>(text[i] - '0');
    if (v > (std::numeric_limits<std::uint64_t>::max() - d) / 10) return false;
    v = v * 10 + d;
    ++i;
  }
  if (i == 0) return false;
  std::uint64_t mult = 1;
  if (std::strcmp(kind, "bytes") == 0 && i < text.size()) {
    switch (std::toupper(static_cast<unsigned char>(text[i]))) {
      case 'K':
        mult = 1ull << 10;
        break;
      case 'M':
        mult = 1ull << 20;
        break;
      case 'G':
        mult = 1ull << 30;
        break;
      default:
        return false;
    }
    ++i;
    if (i < text.size() && (text[i] == 'i' || text[i] == 'I')) ++i;
    if (i < text.size() && (text[i] == 'b' || text[i] == 'B')) ++i;
  }
  if (i != text.size()) return false;
  if (v > std::numeric_limits<std::uint64_t>::max() / mult) return false;
  out = v * mult;
  return true;
}

void set_current_config(const config& c) noexcept { g_config = c; }
}  // namespace detail

const config& current_config() noexcept { return g_config; }

const char* routing_name(std::uint64_t r) noexcept {
  switch (static_cast<routing>(r)) {
    case routing::automatic:
      return "auto";
    case routing::direct:
      return "direct";
    case routing::node:
      return "node";
    case routing::mesh:
      return "mesh";
    case routing::mesh3d:
      return "mesh3d";
    case routing::hypercube:
      return "hypercube";
  }
  return "?";
}

const char* progress_mode_name(std::uint64_t m) noexcept {
  switch (static_cast<progress_mode>(m)) {
    case progress_mode::dedicated:
      return "dedicated";
    case progress_mode::shared:
      return "shared";
    case progress_mode::thread:
      return "thread";
  }
  return "?";
}

const char* cache_mode_name(std::uint64_t m) noexcept {
  switch (static_cast<cache_mode>(m)) {
    case cache_mode::remote:
      return "remote";
    case cache_mode::all:
      return "all";
    case cache_mode::off:
      return "off";
  }
  return "?";
}

namespace {
// Edits (insertions, deletions, substitutions) that turn a into b.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1] ? 1 : 0)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// What is wrong with an unknown name: the closest known variable (when one is close) and every
// known one.
std::string unknown_variable(std::string_view name, std::vector<std::string_view> names) {
  std::string_view closest;
  std::size_t best = std::numeric_limits<std::size_t>::max();
  for (std::string_view n : names) {
    const std::size_t d = edit_distance(name, n);
    if (d < best) {
      best = d;
      closest = n;
    }
  }
  std::sort(names.begin(), names.end());
  // Close: a third of the name after MAILROOM_ (a typo or two), not a different word.
  const std::size_t close = std::max<std::size_t>(1, (closest.size() - 9) / 3);
  const std::string hint = best <= close ? fmt::format(" (did you mean {}?)", closest) : "";
  return fmt::format("unknown environment variable {}{}; the known ones are {}", name, hint,
                     fmt::join(names, ", "));
}
}  // namespace

config config::from_environment() {
  std::string error;
  config c = detail::read_environment(error);
  if (!error.empty()) MAILROOM_FAIL("{}", error);
  return c;
}

config detail::read_environment(std::string& error) {
  config c;
  error.clear();
#define MAILROOM_CONFIG_PARSE(field, env, kind, def, doc)                                        \
  if (const char* s = std::getenv(env); s != nullptr && error.empty()) {                         \
    std::uint64_t v = 0;                                                                         \
    const limits lim = limits_of(env);                                                           \
    if (!detail::parse_config_value(#kind, s, v))                                                \
      error = fmt::format("{}='{}' is not a valid value ({} expected: {})", env, s, #kind, doc); \
    else if (v < lim.min || v > lim.max)                                                         \
      error = fmt::format("{}={} is out of range [{}, {}]", env, v, lim.min, lim.max);           \
    else                                                                                         \
      c.field = v;                                                                               \
  }
  MAILROOM_CONFIG_TABLE(MAILROOM_CONFIG_PARSE)
#undef MAILROOM_CONFIG_PARSE
  if (!error.empty()) return c;

  // A misspelt variable silently ignored is a day lost: reject unknown MAILROOM_* names.
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view kv(*e);
    if (kv.substr(0, 9) != "MAILROOM_") continue;
    std::string_view name = kv.substr(0, kv.find('='));
    // (The text variables are read where they are used: MAILROOM_SIM by programs that offer
    // the simulated machine, mailroom/simulate.hpp; MAILROOM_TRACE by common/trace.cpp.)
    std::vector<std::string_view> names;
#define MAILROOM_CONFIG_KNOWN(field, env, kind, def, doc) names.emplace_back(env);
    MAILROOM_CONFIG_TABLE(MAILROOM_CONFIG_KNOWN)
#undef MAILROOM_CONFIG_KNOWN
#define MAILROOM_CONFIG_KNOWN_TEXT(env, doc) names.emplace_back(env);
    MAILROOM_CONFIG_TEXT_TABLE(MAILROOM_CONFIG_KNOWN_TEXT)
#undef MAILROOM_CONFIG_KNOWN_TEXT
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      error = unknown_variable(name, names);
      return c;
    }
  }
  return c;
}

std::string config::describe() const {
  std::string out;
#define MAILROOM_CONFIG_PRINT(field, env, kind, def, doc)                              \
  out += fmt::format("  {:<31} {:>12}  {}\n", env,                                     \
                     std::strcmp(#kind, "routing") == 0    ? routing_name(field)       \
                     : std::strcmp(#kind, "progress") == 0 ? progress_mode_name(field) \
                     : std::strcmp(#kind, "cache") == 0    ? cache_mode_name(field)    \
                                                           : fmt::format("{}", field),    \
                     doc);
  MAILROOM_CONFIG_TABLE(MAILROOM_CONFIG_PRINT)
#undef MAILROOM_CONFIG_PRINT
  // (Their values as the environment has them now: empty counts as unset, as where they are
  // read.)
#define MAILROOM_CONFIG_PRINT_TEXT(env, doc)                                         \
  {                                                                                  \
    const char* value = std::getenv(env);                                            \
    out += fmt::format("  {:<31} {:>12}  {}\n", env,                                 \
                       value != nullptr && *value != '\0' ? value : "(unset)", doc); \
  }
  MAILROOM_CONFIG_TEXT_TABLE(MAILROOM_CONFIG_PRINT_TEXT)
#undef MAILROOM_CONFIG_PRINT_TEXT
  return out;
}

}  // namespace mailroom
