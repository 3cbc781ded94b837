// Parses and prints the MAILROOM_* table of config.hpp.
#include "mailroom/config.hpp"

#include "mailroom/error.hpp"

#include "common/pe_local.hpp"

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <limits>

extern char** environ;

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
  if (env == "MAILROOM_WATCHDOG") return {0, 7 * 24 * 3600};
  if (env == "MAILROOM_IDLE_SLEEP_NS") return {0, 1000000000};
  if (env == "MAILROOM_IDLE_FLUSH") return {0, 1ull << 40};
  if (env == "MAILROOM_STATS") return {0, 1};
  if (env == "MAILROOM_NODE_SIZE") return {0, 1u << 20};
  return {0, std::numeric_limits<std::uint64_t>::max()};
}
}  // namespace

namespace detail {
bool parse_config_value(const char* kind, const std::string& text, std::uint64_t& out) {
  if (text.empty()) return false;
  if (std::strcmp(kind, "routing") == 0) {
    for (std::uint64_t r = 0; r <= static_cast<std::uint64_t>(routing::mesh); ++r)
      if (text == routing_name(r)) {
        out = r;
        return true;
      }
    return false;
  }
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
      case 'K': mult = 1ull << 10; break;
      case 'M': mult = 1ull << 20; break;
      case 'G': mult = 1ull << 30; break;
      default: return false;
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
    case routing::automatic: return "auto";
    case routing::direct: return "direct";
    case routing::node: return "node";
    case routing::mesh: return "mesh";
  }
  return "?";
}

config config::from_environment() {
  config c;
#define MAILROOM_CONFIG_PARSE(field, env, kind, def, doc)                                      \
  if (const char* s = std::getenv(env)) {                                                      \
    std::uint64_t v = 0;                                                                       \
    MAILROOM_CHECK(detail::parse_config_value(#kind, s, v),                                    \
                   "{}='{}' is not a valid value ({} expected: {})", env, s, #kind, doc);      \
    const limits lim = limits_of(env);                                                         \
    MAILROOM_CHECK(v >= lim.min && v <= lim.max, "{}={} is out of range [{}, {}]", env, v,     \
                   lim.min, lim.max);                                                          \
    c.field = v;                                                                               \
  }
  MAILROOM_CONFIG_TABLE(MAILROOM_CONFIG_PARSE)
#undef MAILROOM_CONFIG_PARSE

  // A misspelt variable silently ignored is a day lost: reject unknown MAILROOM_* names.
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view kv(*e);
    if (kv.substr(0, 9) != "MAILROOM_") continue;
    std::string_view name = kv.substr(0, kv.find('='));
    // (MAILROOM_SIM is read by programs that offer the simulated machine: mailroom/simulate.hpp.)
    bool known = name == "MAILROOM_SIM";
#define MAILROOM_CONFIG_KNOWN(field, env, kind, def, doc) known = known || name == env;
    MAILROOM_CONFIG_TABLE(MAILROOM_CONFIG_KNOWN)
#undef MAILROOM_CONFIG_KNOWN
    MAILROOM_CHECK(known, "unknown environment variable {} (known: see MAILROOM_VERBOSE=1)",
                   name);
  }
  return c;
}

std::string config::describe() const {
  std::string out;
#define MAILROOM_CONFIG_PRINT(field, env, kind, def, doc)                                  \
  out += fmt::format("  {:<31} {:>12}  {}\n", env,                                         \
                     std::strcmp(#kind, "routing") == 0 ? routing_name(field)               \
                                                        : fmt::format("{}", field),         \
                     doc);
  MAILROOM_CONFIG_TABLE(MAILROOM_CONFIG_PRINT)
#undef MAILROOM_CONFIG_PRINT
  return out;
}

}  // namespace mailroom
