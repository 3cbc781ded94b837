// SPDX-License-Identifier: MIT
// The transport's two engines behind one interface: MPI (the distributed machine) and the
// simulated machine (transport/sim*.cpp, many PEs in one process). The public classes of
// transport.hpp hold one of these; which one is chosen when they are constructed. Not installed.
#pragma once

#include "transport/transport.hpp"

#include <vector>

namespace mailroom::transport {

struct channel::impl {
  virtual ~impl() = default;
  [[nodiscard]] virtual int sends_in_flight() const noexcept = 0;
  virtual void send(int dest, const std::byte* data, std::size_t bytes, void* cookie) = 0;
  virtual void send_acks(int dest, const std::uint32_t* ids, std::size_t n) = 0;
  virtual int poll() = 0;
};

struct collective_context::impl {
  virtual ~impl() = default;
  virtual void start_reduce_scatter_sum(const std::int64_t* in, std::int64_t* out) = 0;
  virtual void start_allreduce_sum(const std::int64_t* in, std::int64_t* out, int n) = 0;
  virtual void start_barrier() = 0;
  virtual bool test() = 0;
  virtual bool wait_idle(const char* /*what*/) { return false; }
  [[nodiscard]] virtual bool busy() const noexcept = 0;
};

struct node_memory::impl {
  virtual ~impl() = default;
  // The node's PEs that have a part: their world ranks, ascending, and their parts (no table
  // per PE of the job).
  std::vector<int> members;
  std::vector<std::byte*> parts;
  virtual void node_barrier() = 0;
};

struct heap_window::impl {
  virtual ~impl() = default;
  virtual void get(int target, std::size_t offset, void* out, std::size_t bytes) = 0;
  virtual void put(int target, std::size_t offset, const void* in, std::size_t bytes) = 0;
  virtual std::unique_ptr<request> start_get(int target, std::size_t offset, void* out,
                                             std::size_t bytes) = 0;
  virtual std::unique_ptr<request> start_put(int target, std::size_t offset, const void* in,
                                             std::size_t bytes) = 0;
  virtual std::uint64_t atomic(int target, std::size_t offset, mailroom::detail::elem_type type,
                               atomic_op op, std::uint64_t operand, std::uint64_t compare) = 0;
  virtual std::unique_ptr<request> start_atomic(int target, std::size_t offset,
                                                mailroom::detail::elem_type type, atomic_op op,
                                                std::uint64_t operand, std::uint64_t compare,
                                                std::uint64_t* result) = 0;
  virtual void flush_all() = 0;
};

namespace detail {
/// The world group of the program's collectives: made by init(), freed by finalize().
void start_groups();
void stop_groups();
/// Tests `r` until it completes, keeping mailroom moving meanwhile (`what` names the wait).
void wait_request(request& r, const char* what);
}  // namespace detail

}  // namespace mailroom::transport
