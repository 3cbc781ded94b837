// SPDX-License-Identifier: MIT
// The symmetric heap: one region reserved at an address every PE agreed on at the first
// allocation (collective, as every allocation is), carved by a collective bump allocator that
// every PE runs in the same order, and unmapped when the runtime ends.
#include "mailroom/symmetric.hpp"

#include "mailroom/config.hpp"
#include "mailroom/detail/thread.hpp"
#include "mailroom/simulate.hpp"

#include <fmt/format.h>

#include "common/pe_local.hpp"
#include "pgas/one_sided.hpp"
#include "runtime/lifetime.hpp"
#include "transport/transport.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

namespace mailroom::detail {

namespace {
std::byte* g_base = nullptr;
std::size_t g_reserved = 0;
std::size_t g_top = 0;
struct block {
  std::size_t offset, end;
  std::uint64_t serial;  // allocations made before this one
  bool live;
};
std::vector<block> g_blocks;
std::uint64_t g_allocations = 0;
MAILROOM_PE_LOCAL(g_base);
MAILROOM_PE_LOCAL(g_reserved);
MAILROOM_PE_LOCAL(g_top);
MAILROOM_PE_LOCAL(g_blocks);
MAILROOM_PE_LOCAL(g_allocations);
// One-sided access. The PEs of a node map each other's heaps (each heap is a shared-memory
// object, mapped at the symmetric address by its PE and anywhere by the others): their loads,
// stores and hardware atomics reach it directly. The heap window reaches the others (MPI RMA);
// it exists when some PE is not mapped here (more than one node, or the simulated machine).
std::vector<int> g_node_pes;           // world ranks whose heaps are mapped here, ascending
std::vector<std::byte*> g_node_heaps;  // their bases here (this PE's own: g_base)
bool g_node_contiguous = false;        // g_node_pes is a run of consecutive ranks
std::unique_ptr<transport::heap_window> g_window;
MAILROOM_PE_LOCAL(g_node_pes);
MAILROOM_PE_LOCAL(g_node_heaps);
MAILROOM_PE_LOCAL(g_node_contiguous);
MAILROOM_PE_LOCAL(g_window);

// On the simulated machine every PE's heap is mapped at the same address while it runs, from its
// first allocation on (a system call at each switch to the PE: none for PEs that allocate none).
bool g_heap_used = false;
MAILROOM_PE_LOCAL(g_heap_used);
[[maybe_unused]] const bool g_heap_switch = pe_locals::on_switch_in([] {
  if (g_heap_used) transport::simulated_heap_map();
});

// Drops the freed blocks at the top of the heap (it is a stack: space below a live block waits).
void trim() noexcept {
  while (!g_blocks.empty() && !g_blocks.back().live) g_blocks.pop_back();
  g_top = g_blocks.empty() ? 0 : g_blocks.back().end;
}

// Tries to map [addr, addr+bytes) on this PE without replacing anything already there: the
// shared-memory object `fd`, or private memory when there is none.
bool map_at(std::uintptr_t addr, std::size_t bytes, int fd) {
  const int kind = fd >= 0 ? MAP_SHARED : MAP_PRIVATE | MAP_ANONYMOUS;
  // (The heap is mapped at an address agreed by the PEs: an integer by nature.)
  // NOLINTNEXTLINE(performance-no-int-to-ptr)
  void* p = mmap(reinterpret_cast<void*>(addr), bytes, PROT_READ | PROT_WRITE,
                 kind | MAP_NORESERVE | MAP_FIXED_NOREPLACE, fd, 0);
  if (p == MAP_FAILED) return false;
  if (reinterpret_cast<std::uintptr_t>(p) != addr) {  // a kernel without FIXED_NOREPLACE
    munmap(p, bytes);
    return false;
  }
  return true;
}

// The name of PE `rank`'s heap object in this job.
std::string heap_name(std::uint64_t job, int rank) {
  return fmt::format("/mailroom-{:x}-{}", job, rank);
}

// Whether this node's shared memory (/dev/shm) can hold every heap of the node in full: a heap
// is sparse, but a store to a page tmpfs cannot provide kills the process (SIGBUS), so heaps
// are shared only where they all fit (containers often have a /dev/shm of 64 MiB).
bool shm_holds(std::size_t bytes) {
  struct statvfs fs {};
  if (statvfs("/dev/shm", &fs) != 0) return false;
  // (In doubles: the products may pass 2^64 bytes, and a few bytes either way do not matter.)
  const double avail = static_cast<double>(fs.f_bavail) * static_cast<double>(fs.f_frsize);
  return avail >= static_cast<double>(bytes) * transport::layout().node_size;
}

// Collective: whether the heaps are shared within nodes (the same answer on every PE); if so,
// each PE of a node with others has created its heap as a shared-memory object, `fd`.
bool create_shared_heap(std::uint64_t job, std::size_t bytes, int& fd) {
  fd = -1;
  const bool want = current_config().shared_heap != 0 && transport::layout().node_size > 1;
  if (want && shm_holds(bytes)) {
    const std::string name = heap_name(job, transport::rank());
    fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd >= 0 && ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
      close(fd);
      shm_unlink(name.c_str());
      fd = -1;
    }
  }
  // Shared when no PE wanted it and could not have it; none when no node has several PEs.
  const bool ok = !want || fd >= 0;
  const bool shared =
      transport::allreduce_min(ok ? 1 : 0) == 1 && transport::allreduce_max(want ? 1 : 0) == 1;
  if (shared) return true;
  if (fd >= 0) {
    close(fd);
    shm_unlink(heap_name(job, transport::rank()).c_str());
    fd = -1;
  }
  if (transport::allreduce_max(want ? 1 : 0) == 1 && current_config().verbose > 0 &&
      transport::rank() == 0)
    std::fprintf(stderr,
                 "mailroom: the symmetric heaps are not shared within nodes (a "
                 "shared-memory object of %zu bytes per PE did not fit or could not be "
                 "created); one-sided operations go through MPI\n",
                 bytes);
  return false;
}

// Stops the job after removing this PE's heap object, so that nothing is left in /dev/shm.
template <class... Args>
[[noreturn]] void fail_unlinking(std::uint64_t job, int fd, fmt::format_string<Args...> f,
                                 Args&&... args) {
  if (fd >= 0) shm_unlink(heap_name(job, transport::rank()).c_str());
  MAILROOM_FAIL("{}", fmt::format(f, std::forward<Args>(args)...));
}

// Collective: with shared heaps, maps the heaps of this node's other PEs (their objects, by
// name), then removes the names once every PE has mapped what it needs. Then the window, if
// some PE is not mapped here.
void map_node_heaps(std::uint64_t job, bool shared, int fd) {
  const int me = transport::rank(), P = transport::size();
  g_node_pes.clear();
  g_node_heaps.clear();
  if (shared) {
    std::vector<int> node(static_cast<std::size_t>(P));
    transport::allgather(transport::layout().node, node.data());
    for (int p = 0; p < P; ++p) {
      if (node[static_cast<std::size_t>(p)] != transport::layout().node) continue;
      std::byte* base = g_base;
      if (p != me) {
        const std::string name = heap_name(job, p);
        const int peer = shm_open(name.c_str(), O_RDWR, 0600);
        if (peer < 0)
          fail_unlinking(job, fd, "cannot open the symmetric heap of PE {} ({}): {}", p, name,
                         std::strerror(errno));
        void* m =
            mmap(nullptr, g_reserved, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, peer, 0);
        close(peer);
        if (m == MAP_FAILED)
          fail_unlinking(job, fd, "cannot map the symmetric heap of PE {}: {}", p,
                         std::strerror(errno));
        base = static_cast<std::byte*>(m);
      }
      g_node_pes.push_back(p);
      g_node_heaps.push_back(base);
    }
    transport::barrier();
    if (fd >= 0) {
      shm_unlink(heap_name(job, me).c_str());
      close(fd);
    }
  } else {
    g_node_pes.push_back(me);
    g_node_heaps.push_back(g_base);
  }
  g_node_contiguous =
      g_node_pes.back() - g_node_pes.front() + 1 == static_cast<int>(g_node_pes.size());
  const bool all_mapped = static_cast<int>(g_node_pes.size()) == P;
  if (transport::allreduce_min(all_mapped ? 1 : 0) == 0)
    g_window = std::make_unique<transport::heap_window>(g_base, g_reserved);
}

void start_heap(std::size_t bytes) {
  if (simulated()) {
    g_base = transport::simulated_heap_start(bytes);
    g_reserved = bytes;
    g_top = 0;
    g_node_pes.assign(1, transport::rank());
    g_node_heaps.assign(1, g_base);
    g_node_contiguous = true;
    g_window = std::make_unique<transport::heap_window>(g_base, g_reserved);
    return;
  }
  // A name for this job's heap objects: rank 0's process id and clock.
  std::uint64_t job = 0;
  if (transport::rank() == 0)
    job = static_cast<std::uint64_t>(getpid()) << 32 ^
          static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  transport::broadcast(&job, sizeof job, 0);
  int fd = -1;
  const bool shared = create_shared_heap(job, bytes, fd);
  // Candidates: where each PE's kernel would put the region by itself (rank order), then a few
  // fixed addresses high in the 47-bit user space. The first one that every PE can map wins.
  const int pes = transport::size();
  void* own = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (own == MAP_FAILED)
    fail_unlinking(job, fd,
                   "cannot reserve {} bytes for the symmetric heap: {} (lower "
                   "MAILROOM_SYMMETRIC_HEAP_BYTES)",
                   bytes, std::strerror(errno));
  const auto own_addr = reinterpret_cast<std::uintptr_t>(own);
  munmap(own, bytes);
  std::vector<std::uintptr_t> candidates;
  for (int r = 0; r < pes && r < 8; ++r) {
    std::uintptr_t a = own_addr;
    transport::broadcast(&a, sizeof a, r);
    candidates.push_back(a);
  }
  for (std::uintptr_t a :
       {0x200000000000ull, 0x300000000000ull, 0x100000000000ull, 0x500000000000ull})
    candidates.push_back(a);
  for (std::uintptr_t a : candidates) {
    const bool ok = map_at(a, bytes, fd);
    if (transport::allreduce_min(ok ? 1 : 0) == 1) {
      g_base = reinterpret_cast<std::byte*>(a);  // NOLINT(performance-no-int-to-ptr)
      g_reserved = bytes;
      g_top = 0;
      map_node_heaps(job, shared, fd);
      return;
    }
    if (ok) munmap(reinterpret_cast<void*>(a), bytes);  // NOLINT(performance-no-int-to-ptr)
  }
  fail_unlinking(job, fd,
                 "no address range of {} bytes is free on every PE for the symmetric "
                 "heap (tried {} candidates; lower MAILROOM_SYMMETRIC_HEAP_BYTES)",
                 bytes, candidates.size());
}

void stop_heap() noexcept {
  g_window.reset();
  for (std::size_t i = 0; i < g_node_heaps.size(); ++i)
    if (g_node_heaps[i] != g_base) munmap(g_node_heaps[i], g_reserved);
  g_node_heaps.clear();
  g_node_pes.clear();
  if (g_base != nullptr && !simulated()) munmap(g_base, g_reserved);
  g_base = nullptr;
  g_heap_used = false;
  g_blocks.clear();
  g_top = 0;
}

}  // namespace

void* symmetric_allocate(std::size_t bytes, std::size_t align) {
  const runtime_turn turn;
  MAILROOM_CHECK(runtime_exists(),
                 "symmetric_array created before mailroom::runtime exists (construct "
                 "`mailroom::runtime rt(argc, argv);` first)");
  if (g_base == nullptr) {  // (the first allocation, on every PE: collective too)
    start_heap(current_config().symmetric_heap_bytes);
    at_runtime_stop(&stop_heap);
    at_barrier(&quiet);  // (every put before a barrier is visible after it)
  }
  // A 16-byte prefix before the block holds its size, so handles stay one pointer wide.
  align = std::max<std::size_t>(align, 16);
  const std::size_t offset = (g_top + 16 + align - 1) / align * align;
  MAILROOM_CHECK(offset + bytes <= g_reserved && offset + bytes >= offset,
                 "symmetric heap exhausted: {} bytes requested, {} of {} in use (raise "
                 "MAILROOM_SYMMETRIC_HEAP_BYTES)",
                 bytes, g_top, g_reserved);
  if (simulated() && !g_heap_used) {  // (its heap is mapped from now on)
    g_heap_used = true;
    transport::simulated_heap_map();
  }
  // Zeroed before the collective below: it runs handlers while it waits, and a PE already past
  // it may send lambdas that write to this block; zeroing after would erase their writes.
  std::byte* p = g_base + offset;
  std::memset(p, 0, bytes);
  std::memcpy(p - 16, &bytes, sizeof bytes);
  // Collective allocation must be called alike everywhere; a mismatch would silently break
  // every remote access, so check it.
  const auto s = static_cast<std::int64_t>(bytes);
  MAILROOM_CHECK(transport::allreduce_min(s) == transport::allreduce_max(s),
                 "symmetric_array: PEs asked for different sizes ({} bytes here); the allocation "
                 "is collective and must be the same on every PE",
                 bytes);
  g_top = offset + bytes;
  g_blocks.push_back(block{offset, g_top, g_allocations++, true});
  return p;
}

std::size_t symmetric_count(const void* p) noexcept {
  std::size_t bytes = 0;
  std::memcpy(&bytes, static_cast<const std::byte*>(p) - 16, sizeof bytes);
  return bytes;
}

void symmetric_deallocate(void* p) noexcept {
  if (p == nullptr || g_base == nullptr) return;
  const auto offset = static_cast<std::size_t>(static_cast<std::byte*>(p) - g_base);
  for (auto& b : g_blocks)
    if (b.offset == offset && b.live) b.live = false;
  trim();
}

std::uint64_t symmetric_mark() noexcept { return g_allocations; }

void symmetric_release(std::uint64_t mark) noexcept {
  // By serial, not by address: a block freed before the scope ended may have let a younger one
  // take its place lower in the heap.
  for (auto& b : g_blocks)
    if (b.serial >= mark) b.live = false;
  trim();
}

void* symmetric_peer(int pe, const void* p) noexcept {
  std::size_t k = 0;
  if (g_node_contiguous) {
    k = static_cast<std::size_t>(pe - g_node_pes.front());
    if (k >= g_node_pes.size()) return nullptr;
  } else {
    const auto it = std::lower_bound(g_node_pes.begin(), g_node_pes.end(), pe);
    if (it == g_node_pes.end() || *it != pe) return nullptr;
    k = static_cast<std::size_t>(it - g_node_pes.begin());
  }
  return g_node_heaps[k] + (static_cast<const std::byte*>(p) - g_base);
}

void* symmetric_atomic_peer(int pe, const void* p) noexcept {
  return g_window != nullptr ? nullptr : symmetric_peer(pe, p);
}

namespace {
transport::heap_window& window_for(int pe) {
  if (t_worker > 0) check_runtime_thread("a one-sided operation on a PE of another node");
  MAILROOM_CHECK(g_window != nullptr,
                 "one-sided access to PE {}, whose symmetric heap is not "
                 "reachable (the runtime has ended?)",
                 pe);
  return *g_window;
}
std::size_t offset_of(const void* p) {
  return static_cast<std::size_t>(static_cast<const std::byte*>(p) - g_base);
}
}  // namespace

void symmetric_get(int pe, const void* p, void* out, std::size_t bytes) {
  const runtime_turn turn;
  window_for(pe).get(pe, offset_of(p), out, bytes);
}
void symmetric_put(int pe, void* p, const void* in, std::size_t bytes) {
  const runtime_turn turn;
  window_for(pe).put(pe, offset_of(p), in, bytes);
}
std::uint64_t symmetric_atomic(int pe, void* p, elem_type type, atomic_op op, std::uint64_t operand,
                               std::uint64_t compare) {
  const runtime_turn turn;
  return window_for(pe).atomic(pe, offset_of(p), type, op, operand, compare);
}
std::unique_ptr<transport::request> symmetric_start_get(int pe, const void* p, void* out,
                                                        std::size_t bytes) {
  const runtime_turn turn;
  return window_for(pe).start_get(pe, offset_of(p), out, bytes);
}
std::unique_ptr<transport::request> symmetric_start_put(int pe, void* p, const void* in,
                                                        std::size_t bytes) {
  const runtime_turn turn;
  return window_for(pe).start_put(pe, offset_of(p), in, bytes);
}
std::unique_ptr<transport::request> symmetric_start_atomic(int pe, void* p, elem_type type,
                                                           atomic_op op, std::uint64_t operand,
                                                           std::uint64_t compare,
                                                           std::uint64_t* result) {
  const runtime_turn turn;
  return window_for(pe).start_atomic(pe, offset_of(p), type, op, operand, compare, result);
}

int one_sided_pes() noexcept { return g_base != nullptr ? transport::size() : 0; }

void one_sided_out_of_range(const char* op, int pe, std::size_t i, std::size_t n,
                            std::size_t size) {
  MAILROOM_CHECK(runtime_exists(),
                 "symmetric_array::{} called before mailroom::runtime exists "
                 "(or after it ended)",
                 op);
  MAILROOM_CHECK(g_base != nullptr,
                 "symmetric_array::{} on an array that was never allocated (no symmetric "
                 "allocation has been made yet: a default-constructed array?)",
                 op);
  MAILROOM_CHECK(pe >= 0 && pe < transport::size(),
                 "symmetric_array::{}: PE {} is out of range "
                 "[0, {})",
                 op, pe, transport::size());
  MAILROOM_FAIL("symmetric_array::{}: elements [{}, {}) out of range of an array of {} per PE", op,
                i, i + n, size);
}

void quiet() {
  const runtime_turn turn("mailroom::quiet (or fence)");
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (g_window != nullptr) g_window->flush_all();
}

}  // namespace mailroom::detail
