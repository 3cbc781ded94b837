// SPDX-License-Identifier: MIT
// All-reductions within a node through shared memory (node_reduce.hpp).
//
// The segment: one shared-memory object per group, a part per member: two counters, then a ring
// of the member's contributions. Reduction s is placed at the same ring offset on every member
// (offsets follow from the sizes of the reductions before it, which every member starts in the
// same order); the member copies its contribution there and raises `posted` to s + 1. Once every
// member's `posted` has passed s, each combines all contributions itself, in rank order, into
// its own output and raises its `done` to s + 1. A member places a contribution over an older
// one only once every member's `done` has passed that one. Release stores and acquire loads of
// the counters order the copies: no lock, no message, no MPI call after the segment is made.
#include "transport/node_reduce.hpp"

#include "transport/backend.hpp"
#include "transport/mpi_check.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>

namespace mailroom::transport::detail {

using mailroom::detail::reduction;

class node_reducer::entry final : public request {
 public:
  entry(node_reducer& owner, const void* in, void* out, std::size_t count, const reduction& r,
        std::uint64_t seq)
      : owner_(&owner), in_(in), out_(out), count_(count), red_(r), seq_(seq) {}
  ~entry() override {
    // As MPI_Wait for a request freed early: the members after it need its contribution.
    if (!done_ && owner_ != nullptr) wait_request(*this, "a node all_reduce dropped early");
  }
  entry(const entry&) = delete;
  entry& operator=(const entry&) = delete;
  bool test() override {
    // The oldest advances them all (the others are tested after it, in the same pass of the
    // progress engine: its list is in the order they started).
    if (!done_ && owner_->queue_.front() == this) owner_->advance();
    return done_;
  }
  [[nodiscard]] std::size_t bytes() const noexcept { return count_ * red_.elem_bytes; }

 private:
  friend class node_reducer;
  node_reducer* owner_;
  const void* in_;
  void* out_;
  std::size_t count_;
  reduction red_;
  std::uint64_t seq_;
  std::size_t offset_ = 0;  // in every member's ring, once posted
  bool posted_ = false, done_ = false;
};

namespace {
constexpr std::size_t k_line = 64;
std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

// Whether /dev/shm has room for `bytes` (a store to a page tmpfs cannot provide kills the
// process: SIGBUS).
bool shm_holds(std::size_t bytes) {
  struct statvfs fs {};
  if (statvfs("/dev/shm", &fs) != 0) return false;
  return static_cast<double>(fs.f_bavail) * static_cast<double>(fs.f_frsize) >=
         2.0 * static_cast<double>(bytes);
}

std::uint64_t g_segments = 0;   // segments this process has created (their names)
std::uint64_t g_in_flight = 0;  // reductions started and not finished, over every group
}  // namespace

std::uint64_t node_reductions_in_flight() noexcept { return g_in_flight; }

std::unique_ptr<node_reducer> node_reducer::make(MPI_Comm comm, std::size_t ring_bytes) {
  int rank = 0, size = 1;
  MAILROOM_MPI(MPI_Comm_rank(comm, &rank));
  MAILROOM_MPI(MPI_Comm_size(comm, &size));
  if (size == 1) return nullptr;
  // Every member must place reductions alike: the smallest setting (one member's environment
  // may differ).
  std::uint64_t mine = ring_bytes, least = 0;
  MAILROOM_MPI(MPI_Allreduce(&mine, &least, 1, MPI_UINT64_T, MPI_MIN, comm));
  ring_bytes = static_cast<std::size_t>(least);
  if (ring_bytes == 0) return nullptr;
  MPI_Comm node = MPI_COMM_NULL;
  MAILROOM_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  int node_size = 0;
  MAILROOM_MPI(MPI_Comm_size(node, &node_size));
  MAILROOM_MPI(MPI_Comm_free(&node));
  if (node_size != size) return nullptr;  // (then smaller than the group on every member)

  const std::size_t ring = round_up(ring_bytes, k_line);
  const std::size_t part = sizeof(part_header) + ring;
  const std::size_t total = round_up(part * static_cast<std::size_t>(size),
                                     static_cast<std::size_t>(sysconf(_SC_PAGESIZE)));
  // Member 0 creates the object; the others open it by name; it is unlinked once all have.
  char name[64] = {};
  int fd = -1;
  if (rank == 0 && shm_holds(total)) {
    const std::string n = fmt::format("/mailroom-reduce-{:x}-{}", getpid(), g_segments++);
    fd = shm_open(n.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    // Pages reserved now: one that tmpfs could not provide later would kill the process that
    // first stores to it (SIGBUS).
    if (fd >= 0 && (ftruncate(fd, static_cast<off_t>(total)) != 0 ||
                    posix_fallocate(fd, 0, static_cast<off_t>(total)) != 0)) {
      close(fd);
      shm_unlink(n.c_str());
      fd = -1;
    }
    if (fd >= 0) std::snprintf(name, sizeof name, "%s", n.c_str());
  }
  MAILROOM_MPI(MPI_Bcast(name, sizeof name, MPI_CHAR, 0, comm));
  void* at = MAP_FAILED;
  if (name[0] != '\0') {
    if (rank != 0) fd = shm_open(name, O_RDWR, 0600);
    if (fd >= 0) {
      at = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      close(fd);
    }
  }
  int ok = at != MAP_FAILED ? 1 : 0, all = 0;
  MAILROOM_MPI(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm));
  if (rank == 0 && name[0] != '\0') shm_unlink(name);
  if (all == 0) {
    if (at != MAP_FAILED) munmap(at, total);
    return nullptr;
  }
  return std::unique_ptr<node_reducer>(
      new node_reducer(static_cast<std::byte*>(at), total, rank, size, ring));
}

node_reducer::node_reducer(std::byte* segment, std::size_t segment_bytes, int rank, int size,
                           std::size_t ring_bytes)
    : segment_(segment),
      segment_bytes_(segment_bytes),
      rank_(rank),
      size_(size),
      ring_bytes_(ring_bytes),
      part_bytes_(sizeof(part_header) + ring_bytes),
      max_entry_(ring_bytes / 4) {}

node_reducer::~node_reducer() {
  // Reductions still in flight complete first: the others read this member's contributions.
  while (!queue_.empty())
    wait_request(*queue_.front(), "a team freed with an all_reduce in flight");
  munmap(segment_, segment_bytes_);
}

std::unique_ptr<request> node_reducer::start(const void* in, void* out, std::size_t count,
                                             const reduction& r) {
  auto e = std::make_unique<entry>(*this, in, out, count, r, started_++);
  queue_.push_back(e.get());
  ++g_in_flight;
  // Copied and shown to the others at once when the ring has room (the input may change once
  // the caller's future is ready, not before), so that they can finish it even while this PE
  // waits in MPI (a blocking collective of mailroom's, say) rather than in mailroom. Nothing is
  // read of the others here: each read of a line another PE has written since is a transfer
  // between cores, and a PE that starts many reductions in a row needs none of theirs yet.
  if (posted_ + 1 == started_ && try_post(*e)) publish();
  return e;
}

void node_reducer::publish() noexcept {
  if (published_ == posted_) return;
  header(rank_).posted.value.store(posted_, std::memory_order_release);
  published_ = posted_;
}

void node_reducer::advance() {
  // Queue: the posted entries, then the others (posting is in order).
  const std::uint64_t finished = started_ - queue_.size();
  while (posted_ < started_ && try_post(*queue_[posted_ - finished])) {
  }
  publish();
  const std::uint64_t before = started_ - queue_.size();
  while (!queue_.empty() && queue_.front()->posted_) {
    entry& e = *queue_.front();
    if (min_posted_ <= e.seq_) {
      std::uint64_t m = std::numeric_limits<std::uint64_t>::max();
      for (int r = 0; r < size_; ++r)
        m = std::min(m, header(r).posted.value.load(std::memory_order_acquire));
      min_posted_ = m;
      if (m <= e.seq_) break;
    }
    finish(e);
    queue_.pop_front();
  }
  // One store for all that finished (the others read it only when their rings are full).
  if (started_ - queue_.size() != before)
    header(rank_).done.value.store(started_ - queue_.size(), std::memory_order_release);
}

bool node_reducer::try_post(entry& e) {
  const std::size_t len = e.bytes();
  std::uint64_t a = alloc_;
  const std::size_t off = a % ring_bytes_;
  if (off + len > ring_bytes_) a += ring_bytes_ - off;  // to the next lap: never split
  // Room: from the oldest contribution some member may still read to the end of this one.
  const auto free_below = [&] {
    while (!placed_.empty() && placed_.front().first < min_done_) placed_.pop_front();
    return placed_.empty() || a + len - placed_.front().second <= ring_bytes_;
  };
  if (!free_below()) {
    std::uint64_t m = std::numeric_limits<std::uint64_t>::max();
    for (int r = 0; r < size_; ++r)
      m = std::min(m, header(r).done.value.load(std::memory_order_acquire));
    min_done_ = m;
    if (!free_below()) return false;
  }
  e.offset_ = a % ring_bytes_;
  if (len > 0) std::memcpy(ring(rank_) + e.offset_, e.in_, len);
  placed_.emplace_back(e.seq_, a);
  alloc_ = round_up(a + len, k_line);
  ++posted_;
  e.posted_ = true;
  return true;
}

void node_reducer::finish(entry& e) {
  // x_0 op (x_1 op (... op x_{P-1})): rank order, for operations that do not commute.
  const std::size_t len = e.bytes();
  if (len > 0) {
    std::memcpy(e.out_, ring(size_ - 1) + e.offset_, len);
    for (int r = size_ - 2; r >= 0; --r)
      e.red_.combine(ring(r) + e.offset_, e.out_, e.count_, e.red_.ctx);
  }
  e.done_ = true;
  --g_in_flight;
}

}  // namespace mailroom::transport::detail
