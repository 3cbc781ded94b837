// SPDX-License-Identifier: MIT
// The trace's recording and its file (see trace.hpp). Events stay in memory until the runtime
// ends (at most k_max_events per PE; the rest are counted and the file says how many were lost),
// so recording is a bounds check and a store, and the file is written once.
#include "common/trace.hpp"

#include "mailroom/detail/thread.hpp"
#include "mailroom/error.hpp"

#include "common/pe_local.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace mailroom::detail::trace {

bool g_on = false;
MAILROOM_PE_LOCAL(g_on);

namespace {
constexpr std::size_t k_max_events = std::size_t{1} << 21;  // ~110 MB of events per PE

struct kind_info {
  std::string name;
  const char* category;
  std::array<const char*, 4> keys;
};
struct event {
  double ts, dur;
  std::uint32_t kind;
  std::int32_t tid;
  std::array<std::int64_t, 4> args;
};
struct state {
  std::string file;
  int rank = 0, pes = 1;
  std::chrono::steady_clock::time_point t0;
  std::vector<kind_info> kinds{kind_info{}};  // (kind 0: none)
  std::unordered_map<std::uint64_t, std::uint32_t> cache;
  std::vector<event> events;
  std::uint64_t lost = 0;
  builtin_kinds builtin{};
};
// (A pointer: the simulated machine swaps each PE's globals at every switch between PEs.)
std::unique_ptr<state> g_state;
MAILROOM_PE_LOCAL(g_state);
// Pool workers run handlers too (MAILROOM_WORKERS > 1); the simulated machine, whose PEs share
// the process, runs them one at a time on one thread, so one lock serves every PE.
std::mutex g_lock;

std::string part_name(const std::string& file, int rank) {
  return fmt::format("{}.{}", file, rank);
}

void write_json_string(std::FILE* f, const std::string& s) {
  std::fputc('"', f);
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      std::fputc('\\', f);
      std::fputc(c, f);
    } else if (static_cast<unsigned char>(c) < 0x20) {
      std::fprintf(f, "\\u%04x", c);
    } else {
      std::fputc(c, f);
    }
  }
  std::fputc('"', f);
}
}  // namespace

double now() noexcept {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - g_state->t0)
      .count();
}

std::uint32_t kind(std::string name, const char* category, std::array<const char*, 4> keys) {
  const std::lock_guard hold(g_lock);
  g_state->kinds.push_back({std::move(name), category, keys});
  return static_cast<std::uint32_t>(g_state->kinds.size() - 1);
}

std::uint32_t* cached_kind(std::uint64_t key) {
  const std::lock_guard hold(g_lock);
  return &g_state->cache[key];  // (elements of an unordered_map stay where they are)
}

void record(std::uint32_t k, double ts, double dur,
            const std::array<std::int64_t, 4>& args) noexcept {
  const std::lock_guard hold(g_lock);
  state& s = *g_state;
  if (s.events.size() >= k_max_events) {
    ++s.lost;
    return;
  }
  s.events.push_back({ts, dur, k, t_worker < 0 ? 0 : t_worker, args});
}

const builtin_kinds& builtin() noexcept { return g_state->builtin; }

void start(int rank, int pes) {
  const char* file = std::getenv("MAILROOM_TRACE");
  if (file == nullptr || *file == '\0') return;
  g_state = std::make_unique<state>();
  state& s = *g_state;
  s.file = file;
  s.rank = rank;
  s.pes = pes;
  s.events.reserve(std::size_t{1} << 16);
  s.builtin.ship = kind("ship", "aggregation", {"to", "mailbox", "items", "bytes"});
  s.builtin.arrive = kind("arrive", "aggregation", {"from", "mailbox", "items", "bytes"});
  s.builtin.end_of_stream = kind("end of stream", "aggregation", {"from", "mailbox", "items"});
  s.builtin.wave = kind("termination wave", "termination", {"wave", "sent", "handled"});
  s.builtin.terminated = kind("terminated", "termination", {"selector", "component"});
  s.t0 = std::chrono::steady_clock::now();
  g_on = true;
}

void write_part() {
  if (!g_on) return;
  g_on = false;
  const state& s = *g_state;
  const std::string part = part_name(s.file, s.rank);
  std::FILE* f = std::fopen(part.c_str(), "w");
  MAILROOM_CHECK(f != nullptr, "MAILROOM_TRACE: cannot write {}", part);
  // Every line starts with a comma: merge() puts the parts after one leading entry.
  fmt::print(f,
             ",{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{},\"args\":{{\"name\":\"PE "
             "{}\"}}}}\n",
             s.rank, s.rank);
  fmt::print(f,
             ",{{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":{},\"args\":"
             "{{\"sort_index\":{}}}}}\n",
             s.rank, s.rank);
  if (s.lost > 0)
    fmt::print(f,
               ",{{\"name\":\"trace full: {} events lost\",\"ph\":\"i\",\"s\":\"p\",\"ts\":{:.3f},"
               "\"pid\":{},\"tid\":0}}\n",
               s.lost, s.events.empty() ? 0.0 : s.events.back().ts, s.rank);
  for (const event& e : s.events) {
    const kind_info& k = s.kinds[e.kind];
    std::fputs(",{\"name\":", f);
    write_json_string(f, k.name);
    fmt::print(f, ",\"cat\":\"{}\",\"pid\":{},\"tid\":{},\"ts\":{:.3f}", k.category, s.rank, e.tid,
               e.ts);
    if (e.dur >= 0)
      fmt::print(f, ",\"ph\":\"X\",\"dur\":{:.3f}", e.dur);
    else
      std::fputs(",\"ph\":\"i\",\"s\":\"t\"", f);
    std::fputs(",\"args\":{", f);
    for (std::size_t a = 0, n = 0; a < k.keys.size(); ++a) {
      if (k.keys[a] == nullptr) continue;
      fmt::print(f, "{}\"{}\":{}", n++ == 0 ? "" : ",", k.keys[a], e.args[a]);
    }
    std::fputs("}}\n", f);
  }
  const bool ok = std::ferror(f) == 0;
  MAILROOM_CHECK(std::fclose(f) == 0 && ok, "MAILROOM_TRACE: writing {} failed", part);
  if (s.lost > 0)
    std::fprintf(stderr,
                 "mailroom: rank %d: MAILROOM_TRACE kept the first %zu events; %llu more "
                 "were not recorded\n",
                 s.rank, k_max_events, static_cast<unsigned long long>(s.lost));
}

void merge() {
  const std::unique_ptr<state> taken = std::move(g_state);  // (freed on return, on every PE)
  if (taken == nullptr || taken->rank != 0) return;
  const state& s = *taken;
  std::ofstream out(s.file, std::ios::binary | std::ios::trunc);
  MAILROOM_CHECK(out.good(), "MAILROOM_TRACE: cannot write {}", s.file);
  out << "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"pes\":" << s.pes
      << "},\"traceEvents\":[\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":-1,"
         "\"args\":{\"name\":\"mailroom\"}}\n";
  std::vector<int> missing;
  for (int p = 0; p < s.pes; ++p) {
    const std::string part = part_name(s.file, p);
    std::ifstream in(part, std::ios::binary);
    if (!in) {
      missing.push_back(p);
      continue;
    }
    out << in.rdbuf();
    in.close();
    std::remove(part.c_str());
  }
  out << "]}\n";
  out.close();
  MAILROOM_CHECK(!out.fail(), "MAILROOM_TRACE: writing {} failed", s.file);
  if (!missing.empty())
    std::fprintf(stderr,
                 "mailroom: MAILROOM_TRACE: %s holds %d of %d PEs; the parts of PE %d "
                 "and %zu more are not on this host's file system (%s.<rank> where each ran)\n",
                 s.file.c_str(), s.pes - static_cast<int>(missing.size()), s.pes, missing.front(),
                 missing.size() - 1, s.file.c_str());
}

}  // namespace mailroom::detail::trace
