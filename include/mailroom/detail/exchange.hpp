// The per-process hub of the aggregation layer: owns the transport channel and the buffer pool,
// sends full buffers (queueing them when every send slot is busy) and routes arriving buffers to
// the conveyor they belong to. Not API: conveyors and the runtime use it.
#pragma once

#include "mailroom/config.hpp"
#include "mailroom/transport.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

namespace mailroom::detail {

class conveyor_core;

/// Wire header at the start of every aggregation buffer.
struct buffer_header {
  std::uint32_t conveyor;  ///< id of the conveyor (collective creation order)
  std::uint32_t bytes;     ///< bytes used, header included
  std::uint32_t items;     ///< items in the buffer
  std::uint32_t reserved;
};
inline constexpr std::size_t k_header_bytes = sizeof(buffer_header);

class exchange final : public transport::channel_sink {
 public:
  /// Creates the process's exchange (collective; called by the runtime after transport::init).
  static void start(const config& cfg);
  static void stop();
  [[nodiscard]] static bool running() noexcept { return instance_ != nullptr; }
  [[nodiscard]] static exchange& get() noexcept { return *instance_; }

  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
  [[nodiscard]] int me() const noexcept { return me_; }
  [[nodiscard]] int pes() const noexcept { return pes_; }
  /// Buffers a conveyor may have unacknowledged per destination.
  [[nodiscard]] std::uint32_t credits() const noexcept { return credits_; }
  /// Arrived buffers a conveyor may hold unhandled before user-context pushes to the own PE
  /// refuse (so that producing for oneself never outruns consuming).
  [[nodiscard]] std::size_t arrivals_limit() const noexcept { return arrivals_limit_; }

  /// Collective: gives the conveyor the next id and the buffers that arrived for it early.
  std::uint32_t attach(conveyor_core* c);
  void detach(std::uint32_t id) noexcept;

  std::byte* acquire() noexcept;
  void release(std::byte* buf) noexcept;

  /// Sends a full buffer to `dest` (a remote PE); the conveyor holds a credit for it.
  void send(int dest, std::byte* buf);
  /// Queues the acknowledgement of one handled buffer of conveyor `id` from `source`; it is sent
  /// (coalesced per source) at the next progress().
  void acknowledge(int source, std::uint32_t id);
  /// Conveyors report buffers entering (+1) and leaving (-1) their credit backlogs.
  void backlog_changed(int delta) noexcept { backlogged_ += delta; }
  /// True when no buffer of this PE waits for a credit.
  [[nodiscard]] bool drained() const noexcept { return backlogged_ == 0; }

  /// Tests sends and receives, delivers arrivals and credits, sends acknowledgements.
  /// Returns true if anything happened.
  bool progress();

  [[nodiscard]] std::size_t pool_bytes() const noexcept { return pool_bytes_; }
  [[nodiscard]] std::size_t peak_pool_bytes() const noexcept { return peak_pool_bytes_; }
  [[nodiscard]] std::size_t live_conveyors() const noexcept { return live_; }

  ~exchange();

 private:
  explicit exchange(const config& cfg);
  void sent(void* cookie) noexcept override;
  void received(int source, std::byte* data, std::size_t bytes) noexcept override;
  std::byte* fresh_buffer() noexcept override { return acquire(); }
  void acknowledged(int source, const std::uint32_t* ids, std::size_t n) noexcept override;
  void send_acks();

  static exchange* instance_;
  std::size_t capacity_;
  std::size_t budget_;
  std::uint32_t credits_;
  std::size_t arrivals_limit_;
  int me_, pes_;
  std::vector<std::byte*> free_;
  std::size_t pool_bytes_ = 0, peak_pool_bytes_ = 0;
  long backlogged_ = 0;
  std::vector<conveyor_core*> conveyors_;  // indexed by id; null once detached
  std::unordered_map<std::uint32_t, std::vector<std::pair<int, std::byte*>>> early_;
  std::vector<std::vector<std::uint32_t>> acks_;  // per source PE
  std::vector<int> ack_sources_;                   // sources with acks queued
  std::uint32_t next_id_ = 0;
  std::size_t live_ = 0;
  std::unique_ptr<transport::channel> channel_;
};

}  // namespace mailroom::detail
