// The symmetric heap: one region reserved at an address every PE agreed on at start-up, carved
// by a collective bump allocator that every PE runs in the same order.
#include "mailroom/symmetric.hpp"

#include "mailroom/transport.hpp"

#include "common/pe_local.hpp"
#include "transport/sim.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
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
// On the simulated machine every PE's heap is mapped at the same address while it runs, from its
// first allocation on (a system call at each switch to the PE: none for PEs that allocate none).
bool g_heap_used = false;
MAILROOM_PE_LOCAL(g_heap_used);
[[maybe_unused]] const bool g_heap_switch = pe_locals::on_switch_in([] {
  if (g_heap_used) transport::sim::heap_map();
});

// Drops the freed blocks at the top of the heap (it is a stack: space below a live block waits).
void trim() noexcept {
  while (!g_blocks.empty() && !g_blocks.back().live) g_blocks.pop_back();
  g_top = g_blocks.empty() ? 0 : g_blocks.back().end;
}

// Tries to map [addr, addr+bytes) on this PE without replacing anything already there.
bool map_at(std::uintptr_t addr, std::size_t bytes) {
  void* p = mmap(reinterpret_cast<void*>(addr), bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
  if (p == MAP_FAILED) return false;
  if (reinterpret_cast<std::uintptr_t>(p) != addr) {  // a kernel without FIXED_NOREPLACE
    munmap(p, bytes);
    return false;
  }
  return true;
}
}  // namespace

void symmetric_start(std::size_t bytes) {
  if (transport::sim::active()) {
    g_base = transport::sim::heap_start(bytes);
    g_reserved = bytes;
    g_top = 0;
    return;
  }
  // Candidates: where each PE's kernel would put the region by itself (rank order), then a few
  // fixed addresses high in the 47-bit user space. The first one that every PE can map wins.
  const int pes = transport::size();
  void* own = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  MAILROOM_CHECK(own != MAP_FAILED, "cannot reserve {} bytes for the symmetric heap: {} (lower "
                 "MAILROOM_SYMMETRIC_HEAP_BYTES)", bytes, std::strerror(errno));
  const auto own_addr = reinterpret_cast<std::uintptr_t>(own);
  munmap(own, bytes);
  std::vector<std::uintptr_t> candidates;
  for (int r = 0; r < pes && r < 8; ++r) {
    std::uintptr_t a = own_addr;
    transport::broadcast(&a, sizeof a, r);
    candidates.push_back(a);
  }
  for (std::uintptr_t a : {0x200000000000ull, 0x300000000000ull, 0x100000000000ull,
                           0x500000000000ull})
    candidates.push_back(a);
  for (std::uintptr_t a : candidates) {
    const bool ok = map_at(a, bytes);
    if (transport::allreduce_min(ok ? 1 : 0) == 1) {
      g_base = reinterpret_cast<std::byte*>(a);
      g_reserved = bytes;
      g_top = 0;
      return;
    }
    if (ok) munmap(reinterpret_cast<void*>(a), bytes);
  }
  MAILROOM_FAIL("no address range of {} bytes is free on every PE for the symmetric heap "
                "(tried {} candidates; lower MAILROOM_SYMMETRIC_HEAP_BYTES)",
                bytes, candidates.size());
}

void symmetric_stop() noexcept {
  if (g_base != nullptr && !transport::sim::active()) munmap(g_base, g_reserved);
  g_base = nullptr;
  g_heap_used = false;
  g_blocks.clear();
  g_top = 0;
}

void* symmetric_allocate(std::size_t bytes, std::size_t align) {
  MAILROOM_CHECK(g_base != nullptr,
                 "symmetric_array created before mailroom::runtime exists (construct "
                 "`mailroom::runtime rt(argc, argv);` first)");
  // A 16-byte prefix before the block holds its size, so handles stay one pointer wide.
  align = std::max<std::size_t>(align, 16);
  const std::size_t offset = (g_top + 16 + align - 1) / align * align;
  MAILROOM_CHECK(offset + bytes <= g_reserved && offset + bytes >= offset,
                 "symmetric heap exhausted: {} bytes requested, {} of {} in use (raise "
                 "MAILROOM_SYMMETRIC_HEAP_BYTES)",
                 bytes, g_top, g_reserved);
  if (transport::sim::active() && !g_heap_used) {  // (its heap is mapped from now on)
    g_heap_used = true;
    transport::sim::heap_map();
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

}  // namespace mailroom::detail
