// SPDX-License-Identifier: MIT
// The simulated machine's side of the transport (transport/sim*.cpp): the job-wide calls and the
// engines behind channel, collective_context, node_memory and window when the calling PE is one
// of a simulation's. Not installed.
#pragma once

#include "transport/transport.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace mailroom::transport::sim {

extern bool g_active;
/// True while a simulation runs (in this process, every PE is then simulated).
[[nodiscard]] inline bool active() noexcept { return g_active; }

/// The calling PE's rank, size and node layout, as transport::init sets them.
void describe_pe(int& rank, int& size, node_layout& layout) noexcept;
double wtime() noexcept;
[[noreturn]] void abort(int code) noexcept;
std::string library_version();
/// Gives the other PEs a turn (the calling PE's clock advances).
void yield();
/// Whether the calling PE's last poll found work (for the simulator's deadlock detection).
void note_poll(bool any) noexcept;

void barrier();
enum class reduce_op { min, max, sum };
std::int64_t allreduce(std::int64_t v, reduce_op op);
void broadcast(void* data, std::size_t bytes, int root);
double round_trip_seconds();
void allgather(int v, int* out);
void alltoall(const int* send, int* recv);
void alltoallv(const void* send, const int* send_counts, const int* send_displs, void* recv,
               const int* recv_counts, const int* recv_displs, std::size_t elem_bytes);
void gather(int send, int* recv, int root);
int scatter(const int* send, int root);
void gatherv(const void* send, int count, void* recv, const int* counts, const int* displs,
             std::size_t elem_bytes, int root);
void scatterv(const void* send, const int* counts, const int* displs, void* recv, int count,
              std::size_t elem_bytes, int root);
std::int64_t exscan_sum(std::int64_t v);

std::unique_ptr<channel::impl> make_channel(std::size_t capacity, channel_sink& sink);
std::unique_ptr<collective_context::impl> make_context();
/// The program's world group (transport::group::world()).
std::unique_ptr<group> make_world_group();
std::unique_ptr<node_memory::impl> make_node_memory(std::size_t bytes);
/// One-sided access to the symmetric heaps (base, bytes: the calling PE's, from heap_start).
std::unique_ptr<heap_window::impl> make_heap_window(std::byte* base, std::size_t bytes);

/// The symmetric heap of the calling PE: `bytes` at an address that is the same for every PE
/// (each PE's own memory is mapped there whenever it runs). Collective.
std::byte* heap_start(std::size_t bytes);
/// Maps the calling PE's heap at the common address (after each switch to it).
void heap_map() noexcept;
/// Whether the calling PE has a collective of the program's whose members have all arrived and
/// whose result it has not computed yet (the others wait for it: its waits must keep testing).
bool computing_collectives() noexcept;

// Implemented in transport.cpp (where the progress hooks live).
/// One step of a wait in a collective: the runtime's progress engine if mailroom is active on
/// this PE (it yields when it polls), else a plain yield.
void wait_step(const char* what, bool progress);
/// Whether mailroom is active on the calling PE (progress_hooks::active), or it has collectives
/// to compute (computing_collectives).
bool runtime_active() noexcept;
/// The wait the calling PE's runtime reports (progress_hooks::waiting_in), or null.
const char* runtime_wait() noexcept;

}  // namespace mailroom::transport::sim
