// SPDX-License-Identifier: MIT
// Every MAILROOM_* environment variable, declared once in two tables (numbers, parsed here; text,
// read where it is used) that the parser, the printout and the unknown-name check all expand, so
// that names, defaults and documentation cannot drift apart.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace mailroom {

// X(field, ENV_NAME, kind, default, description). kind: bytes (a count with an optional K, M or
// G suffix, powers of 1024; "KiB"/"KB" spellings accepted), count (a plain non-negative
// integer), routing (auto, direct, node, mesh, mesh3d or hypercube: enum routing), progress
// (enum progress_mode) or cache (enum cache_mode).
#define MAILROOM_CONFIG_TABLE(X)                                                                  \
  X(buffer_bytes, "MAILROOM_BUFFER_BYTES", bytes, 32768,                                          \
    "bytes per aggregation buffer to another node (one per lane and mailbox); 256 B to 16 MiB")   \
  X(credits, "MAILROOM_CREDITS", count, 4,                                                        \
    "buffers a mailbox may have unacknowledged per lane within the node: 16 / PEs per node, 1 "   \
    "to this, fewer if the budget cannot hold them; more wait. To other nodes: 1, plus the link " \
    "pool")                                                                                       \
  X(link_credits, "MAILROOM_LINK_CREDITS", count, 8,                                              \
    "the link pool: buffers per lane to another node that any mailbox of the PE may hold "        \
    "(filling or unacknowledged) beyond its own one, reserved once (and per link in), not per "   \
    "mailbox; fewer if half the budget left at start cannot hold them; 0: each mailbox's own "    \
    "only, one at a time")                                                                        \
  X(receives_posted, "MAILROOM_RECEIVES_POSTED", count, 8,                                        \
    "receives kept posted per PE (each holds one buffer)")                                        \
  X(shared_slots, "MAILROOM_SHARED_SLOTS", count, 32,                                             \
    "slots per other PE of its node in each PE's pool of node-shared memory (fewer if an eighth " \
    "of the budget cannot hold them): buffers to any PE of the node, filled in place and handed " \
    "over without a copy; each mailbox reserves one per lane within the node while the pool "     \
    "lasts, and the rest is shared. 0: buffers between PEs of a node go through MPI like the "    \
    "others")                                                                                     \
  X(node_buffer_bytes, "MAILROOM_NODE_BUFFER_BYTES", bytes, 0,                                    \
    "bytes per buffer to a PE of the same node (a shared slot), at most MAILROOM_BUFFER_BYTES; "  \
    "0: 128 KiB / PEs per node, at least 4 KiB")                                                  \
  X(budget_bytes, "MAILROOM_BUDGET_BYTES", bytes, 256ull << 20,                                   \
    "aggregation memory budget per PE: the posted receives, the shared pool and the link pool "   \
    "at start; each mailbox 1 buffer per lane to and 1 per link in from other nodes, and its "    \
    "lanes within the node from the shared pool while it lasts (else 1 + C buffers per lane and " \
    "C per link in, C its credits there); one that does not fit is an error")                     \
  X(symmetric_heap_bytes, "MAILROOM_SYMMETRIC_HEAP_BYTES", bytes, 1ull << 30,                     \
    "virtual size of the symmetric heap reserved at the same address on every PE")                \
  X(shared_heap, "MAILROOM_SHARED_HEAP", count, 1,                                                \
    "1: the PEs of a node map each other's symmetric heaps, and one-sided operations between "    \
    "them are loads, stores and hardware atomics; 0: private heaps, every one-sided operation "   \
    "to another PE through MPI")                                                                  \
  X(global_page_bytes, "MAILROOM_GLOBAL_PAGE_BYTES", bytes, 4096,                                 \
    "a global_array's page: what its cache fetches from another PE at a time (rounded down to "   \
    "whole elements, at least one); 8 B to 1 GiB")                                                \
  X(global_cache_bytes, "MAILROOM_GLOBAL_CACHE_BYTES", bytes, 64ull << 20,                        \
    "room per PE for each global_array's cached pages of other PEs (at least 2 pages); the "      \
    "least recently used page leaves when it is full")                                            \
  X(global_cache, "MAILROOM_GLOBAL_CACHE", cache, 0,                                              \
    "which of another PE's elements a global_array caches: remote (those of PEs whose memory "    \
    "this PE does not map; those it maps, within its node, are read and written in place), all "  \
    "(every other PE's, as if each were on another node), off (none: every access to another "    \
    "PE is a one-sided get or put)")                                                              \
  X(node_reduce_bytes, "MAILROOM_NODE_REDUCE_BYTES", bytes, 1u << 20,                             \
    "shared memory per member of a team whose PEs share one node (the job's own team too) for "   \
    "its all_reduce calls: those of at most a quarter of this go through it, without MPI; 0: "    \
    "every all_reduce through MPI")                                                               \
  X(idle_sleep_ns, "MAILROOM_IDLE_SLEEP_NS", count, 0,                                            \
    "after 64 progress calls in a row find nothing to do, sleep this long, at most 1 s; 0: "      \
    "spin. Unset: 0, or 1000 where the node's threads (its PEs' workers) outnumber its cores")    \
  X(idle_flush, "MAILROOM_IDLE_FLUSH", count, 256,                                                \
    "a PE that waits (wait, yield, barrier, quiesce, a collective) ships its partly filled "      \
    "buffers that have a credit after this many progress polls in a row find nothing to do; 0: "  \
    "never (flush() by hand)")                                                                    \
  X(workers, "MAILROOM_WORKERS", count, 1,                                                        \
    "threads per PE that run tasks (async, parallel_for): the PE's own thread (worker 0: the "    \
    "main flow, the communication, the handlers of arriving buffers) and N-1 more; any worker "   \
    "handles what tasks send to their own PE (one at a time per mailbox) and a concurrent "       \
    "mailbox's buffers (at once); 1: no thread is started")                                       \
  X(progress, "MAILROOM_PROGRESS", progress, 0,                                                   \
    "who keeps the PE's messages moving while it computes: dedicated (with 2 or more workers, "   \
    "worker 0 runs the main flow, the communication and the handlers, and of the tasks only the " \
    "pieces of the main flow's parallel loops, so that a long task never holds up the PE's "      \
    "messages), shared (worker 0 also runs any task when it has nothing else to do: a worker "    \
    "more for tasks, but a long task on it stops the PE's communication), thread (a thread more " \
    "runs the communication and the handlers whenever the main flow is not in a mailroom call, "  \
    "with any number of workers; needs MPI_THREAD_SERIALIZED). Otherwise, with one worker, "      \
    "mailroom calls, and mailroom::progress() in long loops, move the messages")                  \
  X(watchdog, "MAILROOM_WATCHDOG", count, 300,                                                    \
    "seconds a wait may make no progress before every stuck PE reports what it waits for and "    \
    "the job stops; 0: off. Set it above the longest computation between mailroom calls")         \
  X(warn_after, "MAILROOM_WARN_AFTER", count, 10,                                                 \
    "seconds a wait may make no progress before the PE prints one warning line naming the PEs "   \
    "that hold its buffers unacknowledged (blocked in an MPI call of their own without "          \
    "mailroom::quiesce(), or computing), and waits on; 0: off")                                   \
  X(reduce_slots, "MAILROOM_REDUCE_SLOTS", count, 4096,                                           \
    "messages a reducing mailbox (mailbox_spec::reduce) remembers per sender while they wait "    \
    "in their buffers, to fold later ones of the same key into them (rounded down to a power "    \
    "of two; 16 bytes each)")                                                                     \
  X(reduce_hops, "MAILROOM_REDUCE_HOPS", count, 1,                                                \
    "1: a reducing mailbox's messages are also combined at every PE they pass through (node "     \
    "and grid routing: a cache of MAILROOM_REDUCE_SLOTS per class of link a PE forwards from); "  \
    "0: at the sender only")                                                                      \
  X(stats, "MAILROOM_STATS", count, 0,                                                            \
    "1: every PE prints each selector's counters (messages, bytes, buffers, mean fill, credit "   \
    "waits) when it ends")                                                                        \
  X(routing, "MAILROOM_ROUTING", routing, 0,                                                      \
    "how items reach other nodes: direct (a buffer per PE), node (through the PE of each node "   \
    "that owns the link to the destination node: buffers per PE of the node and per link), "      \
    "mesh (nodes on a 2-D grid: along the row, then the column; links to about 2 sqrt(nodes) "    \
    "nodes), mesh3d (a 3-D grid, three crossings; about 3 cbrt(nodes)), hypercube (one "          \
    "crossing per bit of the node number; log2(nodes) links), auto (node beyond 64 PEs on nodes " \
    "of several PEs, mesh beyond 1,024 nodes, else "                                              \
    "direct; widened towards mesh while the budget cannot hold 4 mailboxes)")                     \
  X(node_size, "MAILROOM_NODE_SIZE", count, 0,                                                    \
    "PEs per node that routing assumes, grouping consecutive ranks (to try routing on one "       \
    "host); 0: the nodes MPI reports")                                                            \
  X(verbose, "MAILROOM_VERBOSE", count, 0, "1 prints the configuration on rank 0 at start-up")

// The variables whose values are text, each read where it is used (not fields of config):
// X(ENV_NAME, description). Listed so that the unknown-name check knows them and describe()
// prints them.
#define MAILROOM_CONFIG_TEXT_TABLE(X)                                                            \
  X("MAILROOM_SIM",                                                                              \
    "P[xN][,key=value...]: a program that offers the simulated machine (mailroom/simulate.hpp) " \
    "runs P PEs, N per node, in this one process instead of under MPI; read before the runtime " \
    "starts")                                                                                    \
  X("MAILROOM_TRACE",                                                                            \
    "a file: when the runtime ends, a trace of every PE (buffers, handler batches, termination " \
    "waves, collectives) in Chrome trace-event JSON")

/// MAILROOM_ROUTING's values (config::routing).
enum class routing : std::uint64_t {
  automatic = 0,
  direct = 1,
  node = 2,
  mesh = 3,
  mesh3d = 4,
  hypercube = 5
};
/// "auto", "direct", "node", "mesh", "mesh3d" or "hypercube".
[[nodiscard]] const char* routing_name(std::uint64_t r) noexcept;
/// MAILROOM_GLOBAL_CACHE's values (config::global_cache).
enum class cache_mode : std::uint64_t { remote = 0, all = 1, off = 2 };
/// "remote", "all" or "off".
[[nodiscard]] const char* cache_mode_name(std::uint64_t m) noexcept;
/// MAILROOM_PROGRESS's values (config::progress).
enum class progress_mode : std::uint64_t { dedicated = 0, shared = 1, thread = 2 };
/// "dedicated", "shared" or "thread".
[[nodiscard]] const char* progress_mode_name(std::uint64_t m) noexcept;

/// The runtime configuration, read from the environment at start-up. One std::uint64_t field
/// per row of MAILROOM_CONFIG_TABLE (in config.hpp, with its default and meaning), named as its
/// variable in lower case without MAILROOM_: buffer_bytes for MAILROOM_BUFFER_BYTES, routing
/// (an enum routing value) for MAILROOM_ROUTING, progress (a progress_mode) for MAILROOM_PROGRESS.
struct config {
#define MAILROOM_CONFIG_FIELD(field, env, kind, def, doc) std::uint64_t field = def;
  MAILROOM_CONFIG_TABLE(MAILROOM_CONFIG_FIELD)
#undef MAILROOM_CONFIG_FIELD

  /// Reads every variable of MAILROOM_CONFIG_TABLE; a bad value is a fatal error naming the
  /// variable. MAILROOM_* variables of neither table are errors too (they are usually typos).
  static config from_environment();
  /// One line per variable of both tables: name, value (a text one's, or "(unset)"),
  /// description.
  [[nodiscard]] std::string describe() const;
};

/// The configuration in force (set when the runtime starts; defaults before).
const config& current_config() noexcept;

namespace detail {
void set_current_config(const config& c) noexcept;
/// Parses one value of the given kind; returns false on a malformed value.
bool parse_config_value(const char* kind, const std::string& text, std::uint64_t& out);
}  // namespace detail

}  // namespace mailroom
