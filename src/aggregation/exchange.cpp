// Per-process hub of the aggregation layer: buffer pool, sends, acknowledgements, and routing of
// arrivals and credits to their conveyors.
#include "mailroom/detail/exchange.hpp"

#include "mailroom/detail/conveyor_core.hpp"
#include "mailroom/error.hpp"

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <new>

namespace mailroom::detail {

exchange* exchange::instance_ = nullptr;
bool g_may_spill = false;

namespace {
constexpr std::align_val_t k_align{64};
}

void exchange::start(const config& cfg) {
  MAILROOM_ASSERT(instance_ == nullptr);
  // Every PE must agree on the buffer size: receives are posted with it.
  const auto lo = transport::allreduce_min(static_cast<std::int64_t>(cfg.buffer_bytes));
  const auto hi = transport::allreduce_max(static_cast<std::int64_t>(cfg.buffer_bytes));
  MAILROOM_CHECK(lo == hi, "MAILROOM_BUFFER_BYTES differs between PEs ({} vs {}); set it the same "
                 "on every PE", lo, hi);
  instance_ = new exchange(cfg);
}

void exchange::stop() {
  delete instance_;
  instance_ = nullptr;
}

exchange::exchange(const config& cfg)
    : capacity_((cfg.buffer_bytes + 63) / 64 * 64),
      budget_(cfg.budget_bytes),
      credits_(static_cast<std::uint32_t>(cfg.credits)),
      reserved_(cfg.receives_posted * capacity_),
      idle_sleep_ns_(cfg.idle_sleep_ns),
      me_(transport::rank()),
      pes_(transport::size()) {
  MAILROOM_CHECK(cfg.receives_posted * capacity_ <= budget_,
                 "MAILROOM_BUDGET_BYTES={} cannot hold the {} posted receives of {} bytes (raise "
                 "the budget or lower MAILROOM_BUFFER_BYTES)",
                 budget_, cfg.receives_posted, capacity_);
  channel_ = std::make_unique<transport::channel>(capacity_, static_cast<int>(cfg.receives_posted),
                                                   *this);
}

exchange::~exchange() {
  // Everything has terminated; let what is still in flight (acknowledgements) complete.
  while (channel_->sends_in_flight() > 0) channel_->poll();
  channel_.reset();
  for (auto& [id, list] : early_)
    for (auto& [src, buf] : list) release(buf);
  for (std::byte* b : free_) ::operator delete[](b, k_align);
}

void exchange::sleep_idle() const noexcept {
  const timespec pause{static_cast<time_t>(idle_sleep_ns_ / 1'000'000'000),
                       static_cast<long>(idle_sleep_ns_ % 1'000'000'000)};
  nanosleep(&pause, nullptr);
}

std::uint32_t exchange::reserve_credits() noexcept {
  const std::size_t per_credit = 2 * static_cast<std::size_t>(pes_) * capacity_;
  const std::size_t left = budget_left();
  if (left < reservation(1)) return 0;
  const auto fit = static_cast<std::uint32_t>(
      std::min<std::size_t>(credits_, (left - reservation(0)) / per_credit));
  reserved_ += reservation(fit);
  return fit;
}

void exchange::release_credits(std::uint32_t c) noexcept { reserved_ -= reservation(c); }

std::uint32_t exchange::attach(conveyor_core* c) {
  const std::uint32_t id = next_id_++;
  conveyors_.push_back(c);
  ++live_;
  if (auto it = early_.find(id); it != early_.end()) {
    for (auto& [src, buf] : it->second) c->deliver(src, buf);
    early_.erase(it);
  }
  return id;
}

void exchange::detach(std::uint32_t id) noexcept {
  conveyors_[id] = nullptr;
  --live_;
}

std::byte* exchange::acquire() noexcept {
  if (!free_.empty()) {
    std::byte* b = free_.back();
    free_.pop_back();
    return b;
  }
  pool_bytes_ += capacity_;
  if (pool_bytes_ > peak_pool_bytes_) peak_pool_bytes_ = pool_bytes_;
  return static_cast<std::byte*>(::operator new[](capacity_, k_align));
}

void exchange::release(std::byte* buf) noexcept {
  // Above budget (after a spill), give memory back instead of keeping it pooled.
  if (pool_bytes_ > budget_) {
    ::operator delete[](buf, k_align);
    pool_bytes_ -= capacity_;
    return;
  }
  free_.push_back(buf);
}

void exchange::send(int dest, std::byte* buf) {
  MAILROOM_ASSERT(dest != me_);
  channel_->send(dest, buf, reinterpret_cast<buffer_header*>(buf)->bytes, buf);
}

void exchange::acknowledge(int source, std::uint32_t id) {
  channel_->send_acks(source, &id, 1);
}

bool exchange::progress() {
  return channel_->poll() > 0;
}

void exchange::sent(void* cookie) noexcept { release(static_cast<std::byte*>(cookie)); }

void exchange::received(int source, std::byte* data, std::size_t bytes) noexcept {
  if (source < 0 || bytes == 0) {  // a cancelled receive at shutdown
    release(data);
    return;
  }
  const auto& h = *reinterpret_cast<const buffer_header*>(data);
  MAILROOM_CHECK(bytes >= k_header_bytes && h.bytes == bytes,
                 "corrupt aggregation buffer from PE {} ({} bytes, header says {})", source, bytes,
                 h.bytes);
  if (h.conveyor < conveyors_.size()) {
    conveyor_core* c = conveyors_[h.conveyor];
    MAILROOM_CHECK(c != nullptr,
                   "a message arrived from PE {} for mailbox #{} after it was destroyed here: "
                   "was it destroyed before it terminated?",
                   source, h.conveyor);
    c->deliver(source, data);
  } else {
    // Collective construction: the sender built this mailbox before we did. Keep, never lose.
    early_[h.conveyor].emplace_back(source, data);
  }
}

void exchange::acknowledged(int source, const std::uint32_t* ids, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) {
    // A conveyor may be gone already: it had terminated, so its credits no longer matter.
    if (ids[i] < conveyors_.size() && conveyors_[ids[i]] != nullptr)
      conveyors_[ids[i]]->credit(source);
  }
}

}  // namespace mailroom::detail
