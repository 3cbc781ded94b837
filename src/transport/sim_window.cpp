// SPDX-License-Identifier: MIT
// The simulated machine's memory: node memory (shared by the PEs of a node), the symmetric heaps
// (one file, a part per PE, mapped at one address for the PE that runs) and one-sided access.
#include "transport/sim.hpp"

#include "mailroom/error.hpp"

#include "transport/backend.hpp"
#include "transport/sim_engine.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

namespace mailroom::transport::sim {

namespace {

// ---- node memory -------------------------------------------------------------------------------
class sim_node_memory final : public node_memory::impl {
 public:
  explicit sim_node_memory(std::size_t bytes) {
    engine& e = eng();
    const int pe = me().pe, node = e.node_of(pe);
    if (e.node_size(node) == 1 || bytes == 0) return;
    bytes_ = (bytes + 4095) / 4096 * 4096;
    void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    MAILROOM_CHECK(p != MAP_FAILED, "simulated machine: cannot map {} bytes of node memory: {}",
                   bytes_, std::strerror(errno));
    mine_ = static_cast<std::byte*>(p);
    const std::byte* my_part = mine_;
    meet(node_group(node), me().node_seq++, e.node_size(node), pe - node * e.m.per_node, &my_part,
         "node memory (MPI_Win_allocate_shared)", false, [&](const std::vector<const void*>& all) {
           for (int i = 0; i < e.node_size(node); ++i) {
             members.push_back(node * e.m.per_node + i);
             parts.push_back(const_cast<std::byte*>(arg<const std::byte*>(all, i)));
           }
         });
  }
  ~sim_node_memory() override {
    if (mine_ == nullptr) return;
    node_barrier();  // (collective, as MPI_Win_free: nobody touches this part after it)
    munmap(mine_, bytes_);
  }
  void node_barrier() override {
    engine& e = eng();
    const int pe = me().pe, node = e.node_of(pe);
    meet(node_group(node), me().node_seq++, e.node_size(node), pe - node * e.m.per_node, &pe,
         "node barrier", false, [](const std::vector<const void*>&) {});
  }

 private:
  std::byte* mine_ = nullptr;
  std::size_t bytes_ = 0;
};

// ---- one-sided access --------------------------------------------------------------------------
// A completed remote operation: a round trip on the PE's clock; every 1024th (of `ops`, the
// window's count) lets the others have a turn. One each would make the naive baselines cost a
// switch per element, and a switch to a PE that uses the symmetric heap remaps it (its cost grows
// with the pages the PE touched since: 64 made the naive variants 5x slower in real time once
// they kept their arrays in the heap).
void charge_remote_access(int target, std::uint64_t& ops) {
  engine& e = eng();
  fiber& f = me();
  if (target != f.pe)
    f.clock += 2 * (e.node_of(target) == e.node_of(f.pe) ? e.m.node_latency : e.m.network_latency);
  if (++ops % 1024 == 0) {
    f.busy = true;
    yield();
  }
}

// ---- one-sided access to the symmetric heaps ---------------------------------------------------
// Every heap through a second mapping of their file; each access is charged as the naive
// baselines' windows are (charge_remote_access).
class done_request final : public request {
 public:
  bool test() override { return true; }
};

class sim_heap_window final : public heap_window::impl {
 public:
  sim_heap_window() {
    engine& e = eng();
    if (e.heaps_all == nullptr) {
      void* p = mmap(nullptr, e.heap_bytes * static_cast<std::size_t>(e.m.pes),
                     PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, e.heap_fd, 0);
      MAILROOM_CHECK(p != MAP_FAILED,
                     "simulated machine: cannot map the symmetric heaps for "
                     "one-sided access: {}",
                     std::strerror(errno));
      e.heaps_all = static_cast<std::byte*>(p);
    }
    barrier();
  }
  ~sim_heap_window() override { barrier(); }
  void get(int target, std::size_t offset, void* out, std::size_t bytes) override {
    std::memcpy(out, at(target, offset), bytes);
  }
  void put(int target, std::size_t offset, const void* in, std::size_t bytes) override {
    std::memcpy(at(target, offset), in, bytes);
  }
  std::unique_ptr<request> start_get(int target, std::size_t offset, void* out,
                                     std::size_t bytes) override {
    get(target, offset, out, bytes);
    return std::make_unique<done_request>();
  }
  std::unique_ptr<request> start_put(int target, std::size_t offset, const void* in,
                                     std::size_t bytes) override {
    put(target, offset, in, bytes);
    return std::make_unique<done_request>();
  }
  std::uint64_t atomic(int target, std::size_t offset, mailroom::detail::elem_type type,
                       atomic_op op, std::uint64_t operand, std::uint64_t compare) override {
    using mailroom::detail::elem_type;
    std::size_t width = 8;
    switch (type) {
      case elem_type::i8:
      case elem_type::u8:
        width = 1;
        break;
      case elem_type::i16:
      case elem_type::u16:
        width = 2;
        break;
      case elem_type::i32:
      case elem_type::u32:
        width = 4;
        break;
      default:
        break;
    }
    std::byte* p = at(target, offset);
    std::uint64_t old = 0;
    std::memcpy(&old, p, width);  // (little-endian)
    std::uint64_t now = old;
    switch (op) {
      case atomic_op::add:
        now = old + operand;
        break;
      case atomic_op::band:
        now = old & operand;
        break;
      case atomic_op::bor:
        now = old | operand;
        break;
      case atomic_op::bxor:
        now = old ^ operand;
        break;
      case atomic_op::swap:
        now = operand;
        break;
      case atomic_op::load:
        break;
      case atomic_op::compare_swap: {
        const std::uint64_t mask = width == 8 ? ~0ull : (1ull << (8 * width)) - 1;
        if ((old & mask) == (compare & mask)) now = operand;
        break;
      }
    }
    std::memcpy(p, &now, width);
    return old;
  }
  std::unique_ptr<request> start_atomic(int target, std::size_t offset,
                                        mailroom::detail::elem_type type, atomic_op op,
                                        std::uint64_t operand, std::uint64_t compare,
                                        std::uint64_t* result) override {
    *result = atomic(target, offset, type, op, operand, compare);
    return std::make_unique<done_request>();
  }
  void flush_all() override {}

 private:
  std::byte* at(int target, std::size_t offset) {
    charge_remote_access(target, ops_);
    const engine& e = eng();
    return e.heaps_all + e.heap_bytes * static_cast<std::size_t>(target) + offset;
  }
  std::uint64_t ops_ = 0;
};

}  // namespace

std::unique_ptr<node_memory::impl> make_node_memory(std::size_t bytes) {
  return std::make_unique<sim_node_memory>(bytes);
}
std::unique_ptr<heap_window::impl> make_heap_window(std::byte* base, std::size_t bytes) {
  MAILROOM_CHECK(base == eng().heap_base && bytes <= eng().heap_bytes,
                 "simulated machine: a heap window over memory other than the symmetric heap");
  return std::make_unique<sim_heap_window>();
}

// ---- the symmetric heaps -----------------------------------------------------------------------
std::byte* heap_start(std::size_t bytes) {
  engine& e = eng();
  bytes = (bytes + 4095) / 4096 * 4096;
  const auto lo = allreduce(static_cast<std::int64_t>(bytes), reduce_op::min);
  const auto hi = allreduce(static_cast<std::int64_t>(bytes), reduce_op::max);
  MAILROOM_CHECK(lo == hi, "MAILROOM_SYMMETRIC_HEAP_BYTES differs between PEs");
  if (e.heap_base == nullptr) {
    e.heap_bytes = bytes;
    e.heap_fd = memfd_create("mailroom-simulated-heaps", MFD_CLOEXEC);
    MAILROOM_CHECK(e.heap_fd >= 0, "simulated machine: memfd_create failed: {}",
                   std::strerror(errno));
    MAILROOM_CHECK(
        ftruncate(e.heap_fd, static_cast<off_t>(bytes * static_cast<std::size_t>(e.m.pes))) == 0,
        "simulated machine: cannot size the symmetric heaps ({} x {} bytes): {} "
        "(lower MAILROOM_SYMMETRIC_HEAP_BYTES)",
        e.m.pes, bytes, std::strerror(errno));
    void* p = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    MAILROOM_CHECK(p != MAP_FAILED,
                   "simulated machine: cannot reserve {} bytes for the "
                   "symmetric heap: {}",
                   bytes, std::strerror(errno));
    e.heap_base = static_cast<std::byte*>(p);
  }
  MAILROOM_CHECK(bytes == e.heap_bytes,
                 "simulated machine: a second runtime asked for a "
                 "symmetric heap of another size ({} bytes, then {})",
                 e.heap_bytes, bytes);
  return e.heap_base;  // (mapped at the PE's first allocation: symmetric.cpp)
}

void heap_map() noexcept {
  engine& e = eng();
  const int pe = me().pe;
  if (e.heap_mapped == pe) return;
  void* p = mmap(e.heap_base, e.heap_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                 e.heap_fd, static_cast<off_t>(e.heap_bytes * static_cast<std::size_t>(pe)));
  if (p == MAP_FAILED) {
    std::fprintf(stderr,
                 "mailroom: rank %d: simulated machine: cannot map its symmetric heap: "
                 "%s\n",
                 pe, std::strerror(errno));
    std::_Exit(1);
  }
  e.heap_mapped = pe;
}

}  // namespace mailroom::transport::sim
