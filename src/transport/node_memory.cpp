// SPDX-License-Identifier: MIT
// Memory shared by the PEs of one node, for the aggregation layer's buffers between them.
#include "transport/transport.hpp"

#include "transport/backend.hpp"
#include "transport/mpi_check.hpp"
#include "transport/sim.hpp"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace mailroom::transport {

namespace {
constexpr std::size_t k_align = 64;
}

namespace {
struct mpi_node_memory final : node_memory::impl {
  MPI_Comm node = detail::node_comm();
  MPI_Win win = MPI_WIN_NULL;

  explicit mpi_node_memory(std::size_t bytes);
  ~mpi_node_memory() override {
    if (win != MPI_WIN_NULL) {
      MPI_Win_unlock_all(win);
      MPI_Win_free(&win);
    }
  }
  void node_barrier() override {
    // The barrier orders the stores before it (MPI_Win_sync: the memory model of shared
    // windows).
    if (win != MPI_WIN_NULL) MAILROOM_MPI(MPI_Win_sync(win));
    MAILROOM_MPI(MPI_Barrier(node));
    if (win != MPI_WIN_NULL) MAILROOM_MPI(MPI_Win_sync(win));
  }
};

mpi_node_memory::mpi_node_memory(std::size_t bytes) {
  const int me = rank();
  const int node_size = layout().node_size;
  if (node_size == 1 || bytes == 0) return;
  // Each part on pages of its own (first touched by its owner, so on its owner's NUMA node).
  MPI_Info info = MPI_INFO_NULL;
  MAILROOM_MPI(MPI_Info_create(&info));
  MAILROOM_MPI(MPI_Info_set(info, "alloc_shared_noncontig", "true"));
  // Parts are handed out aligned to a cache line (MPI may place them anywhere): 64 bytes more.
  void* mine = nullptr;  // (found again through MPI_Win_shared_query below)
  MAILROOM_MPI(
      MPI_Win_allocate_shared(static_cast<MPI_Aint>(bytes + k_align), 1, info, node, &mine, &win));
  MAILROOM_MPI(MPI_Info_free(&info));
  MAILROOM_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
  // A passive-target epoch for the window's lifetime: what MPI_Win_sync needs.
  MAILROOM_MPI(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
  // World ranks of the node's PEs, in node rank order.
  std::vector<int> world(static_cast<std::size_t>(node_size));
  MAILROOM_MPI(MPI_Allgather(&me, 1, MPI_INT, world.data(), 1, MPI_INT, node));
  std::vector<std::pair<int, std::byte*>> found;
  for (int r = 0; r < node_size; ++r) {
    MPI_Aint got = 0;
    int disp = 0;
    void* base = nullptr;
    MAILROOM_MPI(MPI_Win_shared_query(win, r, &got, &disp, &base));
    // (Parts may come rounded up to whole pages.)
    MAILROOM_CHECK(static_cast<std::size_t>(got) >= bytes + k_align,
                   "the PEs of a node asked for shared parts of different sizes ({} and {} bytes)",
                   got, bytes + k_align);
    // The same address modulo a page in every process's mapping, so the same offset here.
    const auto at = reinterpret_cast<std::uintptr_t>(base);
    found.emplace_back(world[static_cast<std::size_t>(r)],
                       static_cast<std::byte*>(base) + ((k_align - at % k_align) % k_align));
  }
  std::sort(found.begin(), found.end());
  for (const auto& [pe, part] : found) {
    members.push_back(pe);
    parts.push_back(part);
  }
}

}  // namespace

node_memory::node_memory(std::size_t bytes)
    : impl_(sim::active() ? sim::make_node_memory(bytes)
                          : std::make_unique<mpi_node_memory>(bytes)) {}
node_memory::~node_memory() = default;

std::byte* node_memory::part(int pe) const noexcept {
  const auto& m = impl_->members;
  const auto it = std::lower_bound(m.begin(), m.end(), pe);
  return it != m.end() && *it == pe ? impl_->parts[static_cast<std::size_t>(it - m.begin())]
                                    : nullptr;
}

std::vector<int> node_memory::members() const { return impl_->members; }

void node_memory::node_barrier() { impl_->node_barrier(); }

}  // namespace mailroom::transport
