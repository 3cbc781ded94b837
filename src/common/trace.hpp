// SPDX-License-Identifier: MIT
// MAILROOM_TRACE=FILE: what the runtime did over time on each PE, written when the runtime ends
// as one Chrome trace-event JSON file (open it in https://ui.perfetto.dev or chrome://tracing):
// buffers shipped and arrived, handler batches, termination waves, selectors terminated,
// collectives and other operations. An event is per buffer, per batch, per wave or per
// operation, never per message, and costs one predictable branch when tracing is off. Not
// installed.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace mailroom::detail::trace {

/// MAILROOM_TRACE names a file: events are recorded on this PE.
extern bool g_on;

/// Microseconds since tracing started (after the runtime's start-up barrier, the same moment on
/// every PE to within that barrier's skew).
[[nodiscard]] double now() noexcept;

/// A kind of event: its name, its category (a track group in the viewer) and the names of its up
/// to 4 integer arguments (null: unused). Returns its number (never 0).
std::uint32_t kind(std::string name, const char* category, std::array<const char*, 4> keys);
/// The kind made once for `key` (a static string's address or any unique number), by `make`
/// when first asked.
template <class Make>
std::uint32_t kind_for(std::uint64_t key, Make make);

/// Records an event of kind `k`: an instant at `ts` if `dur` < 0, else a span from `ts` for
/// `dur` microseconds.
void record(std::uint32_t k, double ts, double dur,
            const std::array<std::int64_t, 4>& args) noexcept;

/// The runtime's own kinds.
struct builtin_kinds {
  std::uint32_t ship, arrive, end_of_stream, wave, terminated;
};
[[nodiscard]] const builtin_kinds& builtin() noexcept;

/// Starts tracing on this PE if MAILROOM_TRACE is set (called after the start-up barrier).
void start(int rank, int pes);
/// Writes this PE's part next to the file (FILE.<rank>). Then, once every PE has (a barrier),
/// merge() on rank 0 joins the parts into FILE and removes them.
void write_part();
void merge();

// ---- implementation ----------------------------------------------------------------------------
std::uint32_t* cached_kind(std::uint64_t key);
template <class Make>
std::uint32_t kind_for(std::uint64_t key, Make make) {
  std::uint32_t* k = cached_kind(key);
  if (*k == 0) *k = make();
  return *k;
}

}  // namespace mailroom::detail::trace
