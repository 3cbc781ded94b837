// SPDX-License-Identifier: MIT
// Point-to-point messages on one private communicator: aggregation buffers (receives kept
// posted, any source) and acknowledgements (small, on a tag of their own), so that nothing else
// in the program can match them.
#include "transport/transport.hpp"

#include "transport/backend.hpp"
#include "transport/mpi_check.hpp"
#include "transport/sim.hpp"

#include <algorithm>
#include <vector>

namespace mailroom::transport {

namespace {
constexpr int k_data_tag = 7;
constexpr int k_ack_tag = 8;
constexpr std::size_t k_acks_per_message = 1024;
constexpr int k_ack_receives = 4;
}  // namespace

namespace {
struct mpi_channel final : channel::impl {
  MPI_Comm comm = MPI_COMM_NULL;
  std::size_t capacity;
  channel_sink& sink;

  // Sends: slots grow on demand (the layer above bounds them); an ack send owns its buffer.
  std::vector<MPI_Request> send_req;
  std::vector<void*> send_cookie;
  std::vector<std::vector<std::uint32_t>> send_acks_;
  std::vector<int> free_send;
  int active_sends = 0;

  // Receives: data slots then ack slots, tested together.
  std::vector<MPI_Request> recv_req;
  std::vector<std::byte*> recv_buf;
  std::vector<std::vector<std::uint32_t>> ack_buf;
  int data_slots;

  std::vector<int> done_idx;
  std::vector<MPI_Status> done_status;

  mpi_channel(std::size_t cap, int receives, channel_sink& s)
      : capacity(cap), sink(s), data_slots(receives) {
    MAILROOM_MPI(MPI_Comm_dup(detail::comm(), &comm));
    MAILROOM_MPI(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
    recv_req.assign(static_cast<std::size_t>(receives) + std::size_t{k_ack_receives},
                    MPI_REQUEST_NULL);
    recv_buf.assign(static_cast<std::size_t>(receives), nullptr);
    ack_buf.assign(k_ack_receives, std::vector<std::uint32_t>(k_acks_per_message));
    for (int i = 0; i < receives + k_ack_receives; ++i) post(i);
  }

  void post(int i) {
    if (i < data_slots) {
      recv_buf[i] = sink.fresh_buffer();
      MAILROOM_MPI(MPI_Irecv(recv_buf[i], static_cast<int>(capacity), MPI_BYTE, MPI_ANY_SOURCE,
                             k_data_tag, comm, &recv_req[i]));
    } else {
      auto& b = ack_buf[static_cast<std::size_t>(i - data_slots)];
      MAILROOM_MPI(MPI_Irecv(b.data(), static_cast<int>(b.size()), MPI_UINT32_T, MPI_ANY_SOURCE,
                             k_ack_tag, comm, &recv_req[i]));
    }
  }

  int take_send_slot() {
    if (free_send.empty()) {
      free_send.push_back(static_cast<int>(send_req.size()));
      send_req.push_back(MPI_REQUEST_NULL);
      send_cookie.push_back(nullptr);
      send_acks_.emplace_back();
    }
    const int slot = free_send.back();
    free_send.pop_back();
    ++active_sends;
    return slot;
  }

  ~mpi_channel() override {
    for (auto& r : recv_req) {
      if (r == MPI_REQUEST_NULL) continue;
      MPI_Cancel(&r);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    // The data buffers were the sink's; hand them back as empty arrivals it can recycle.
    for (auto* b : recv_buf)
      if (b != nullptr) sink.received(-1, b, 0);
    for (auto& r : send_req)
      if (r != MPI_REQUEST_NULL) MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Comm_free(&comm);
  }

  [[nodiscard]] int sends_in_flight() const noexcept override { return active_sends; }

  void send(int dest, const std::byte* data, std::size_t bytes, void* cookie) override {
    const int slot = take_send_slot();
    send_cookie[slot] = cookie;
    MAILROOM_MPI(MPI_Isend(data, static_cast<int>(bytes), MPI_BYTE, dest, k_data_tag, comm,
                           &send_req[slot]));
  }

  void send_acks(int dest, const std::uint32_t* ids, std::size_t n) override {
    while (n > 0) {
      const std::size_t k = std::min(n, k_acks_per_message);
      const int slot = take_send_slot();
      send_cookie[slot] = nullptr;
      auto& b = send_acks_[slot];
      b.assign(ids, ids + k);
      MAILROOM_MPI(MPI_Isend(b.data(), static_cast<int>(k), MPI_UINT32_T, dest, k_ack_tag, comm,
                             &send_req[slot]));
      ids += k;
      n -= k;
    }
  }

  int poll() override;
};

int mpi_channel::poll() {
  mpi_channel& m = *this;
  detail::advance_duplicates();
  int completions = 0;
  int n = 0;
  const std::size_t most = std::max(m.send_req.size(), m.recv_req.size());
  if (m.done_idx.size() < most) {
    m.done_idx.resize(most);
    m.done_status.resize(most);
  }
  if (m.active_sends > 0) {
    MAILROOM_MPI(MPI_Testsome(static_cast<int>(m.send_req.size()), m.send_req.data(), &n,
                              m.done_idx.data(), MPI_STATUSES_IGNORE));
    if (n != MPI_UNDEFINED) {
      for (int k = 0; k < n; ++k) {
        const int slot = m.done_idx[k];
        m.free_send.push_back(slot);
        --m.active_sends;
        if (m.send_cookie[slot] != nullptr) m.sink.sent(m.send_cookie[slot]);
      }
      completions += n;
    }
  }
  MAILROOM_MPI(MPI_Testsome(static_cast<int>(m.recv_req.size()), m.recv_req.data(), &n,
                            m.done_idx.data(), m.done_status.data()));
  if (n != MPI_UNDEFINED) {
    for (int k = 0; k < n; ++k) {
      const int slot = m.done_idx[k];
      const MPI_Status& st = m.done_status[k];
      if (slot < m.data_slots) {
        int bytes = 0;
        MAILROOM_MPI(MPI_Get_count(&st, MPI_BYTE, &bytes));
        std::byte* buf = m.recv_buf[slot];
        m.post(slot);
        m.sink.received(st.MPI_SOURCE, buf, static_cast<std::size_t>(bytes));
      } else {
        int count = 0;
        MAILROOM_MPI(MPI_Get_count(&st, MPI_UINT32_T, &count));
        auto& b = m.ack_buf[static_cast<std::size_t>(slot - m.data_slots)];
        m.sink.acknowledged(st.MPI_SOURCE, b.data(), static_cast<std::size_t>(count));
        m.post(slot);
      }
    }
    completions += n;
  }
  return completions;
}
}  // namespace

channel::channel(std::size_t capacity, int receives, channel_sink& sink)
    : impl_(sim::active() ? sim::make_channel(capacity, sink)
                          : std::make_unique<mpi_channel>(capacity, receives, sink)) {}
channel::~channel() = default;

int channel::sends_in_flight() const noexcept { return impl_->sends_in_flight(); }
void channel::send(int dest, const std::byte* data, std::size_t bytes, void* cookie) {
  impl_->send(dest, data, bytes, cookie);
}
void channel::send_acks(int dest, const std::uint32_t* ids, std::size_t n) {
  impl_->send_acks(dest, ids, n);
}
int channel::poll() { return impl_->poll(); }

}  // namespace mailroom::transport
