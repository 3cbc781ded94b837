// SPDX-License-Identifier: MIT
// The simulated machine's point-to-point messages (channel): each leaves when its link is free
// and lands in the destination's inbox when the link's bandwidth, latency and jitter say.
#include "transport/sim.hpp"

#include "mailroom/error.hpp"

#include "transport/backend.hpp"
#include "transport/sim_engine.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

namespace mailroom::transport::sim {

namespace {

// ---- point to point ----------------------------------------------------------------------------
inbox& inbox_of(int pe, std::uint64_t channel) { return eng().inboxes[{pe, channel}]; }

void post(std::uint64_t channel, int dest, const void* data, std::size_t bytes, bool ack) {
  engine& e = eng();
  fiber& f = me();
  const bool near = e.node_of(dest) == e.node_of(f.pe);
  const double latency = dest == f.pe ? 0 : near ? e.m.node_latency : e.m.network_latency;
  const double bandwidth = near ? e.m.node_bandwidth : e.m.network_bandwidth;
  link_state& l = f.links[dest];
  const double depart = std::max(f.clock, l.free);
  const double wire = static_cast<double>(bytes) / bandwidth;
  l.free = depart + wire;
  const double at = std::max(l.last, depart + wire + latency * (1 + e.m.jitter * e.uniform()));
  l.last = at;
  const auto* b = static_cast<const std::byte*>(data);
  inbox_of(dest, channel).push(new message{at, e.seq++, f.pe, ack, {b, b + bytes}});
  e.activity();
}

class sim_channel final : public channel::impl {
 public:
  sim_channel(std::size_t capacity, channel_sink& sink)
      : capacity_(capacity), sink_(sink), id_(me().channels++), in_(&inbox_of(me().pe, id_)) {}
  ~sim_channel() override {
    // (Under MPI, what was not received by now is cancelled.)
    while (!in_->empty()) {
      delete in_->top();
      in_->pop();
    }
    eng().inboxes.erase({me().pe, id_});
  }
  [[nodiscard]] int sends_in_flight() const noexcept override {
    return static_cast<int>(sent_.size());
  }
  void send(int dest, const std::byte* data, std::size_t bytes, void* cookie) override {
    MAILROOM_ASSERT(bytes <= capacity_);
    post(id_, dest, data, bytes, false);
    sent_.push_back(cookie);  // copied: complete at the next poll
  }
  void send_acks(int dest, const std::uint32_t* ids, std::size_t n) override {
    post(id_, dest, ids, n * sizeof *ids, true);
  }
  int poll() override {
    yield();
    int n = 0;
    if (!sent_.empty()) {
      done_.swap(sent_);  // (sent() may send again)
      for (void* c : done_) sink_.sent(c);
      n += static_cast<int>(done_.size());
      done_.clear();
    }
    const double now = me().clock;
    while (!in_->empty() && in_->top()->at <= now) {
      std::unique_ptr<message> m(in_->top());
      in_->pop();
      ++n;
      eng().activity();
      if (m->ack) {
        acks_.resize(m->data.size() / sizeof(std::uint32_t));
        std::memcpy(acks_.data(), m->data.data(), m->data.size());
        sink_.acknowledged(m->source, acks_.data(), acks_.size());
      } else {
        std::byte* buf = sink_.fresh_buffer();
        std::memcpy(buf, m->data.data(), m->data.size());
        sink_.received(m->source, buf, m->data.size());
      }
    }
    return n;
  }

 private:
  std::size_t capacity_;
  channel_sink& sink_;
  std::uint64_t id_;
  inbox* in_;
  std::vector<void*> sent_, done_;
  std::vector<std::uint32_t> acks_;
};

}  // namespace

std::unique_ptr<channel::impl> make_channel(std::size_t capacity, channel_sink& sink) {
  return std::make_unique<sim_channel>(capacity, sink);
}

}  // namespace mailroom::transport::sim
