// Point-to-point byte buffers: a bounded set of sends in flight and receives kept posted, all on
// one private communicator so that nothing else in the program can match them.
#include "mailroom/transport.hpp"

#include "transport/mpi_check.hpp"

#include <algorithm>
#include <vector>

namespace mailroom::transport {

namespace {
constexpr int k_tag = 7;
}

struct channel::impl {
  MPI_Comm comm = MPI_COMM_NULL;
  std::size_t capacity;
  channel_sink& sink;
  std::vector<MPI_Request> send_req;
  std::vector<void*> send_cookie;
  std::vector<int> free_send;  // stack of free send slots
  std::vector<MPI_Request> recv_req;
  std::vector<std::byte*> recv_buf;
  std::vector<int> done_idx;
  std::vector<MPI_Status> done_status;

  impl(std::size_t cap, int sends, int receives, channel_sink& s)
      : capacity(cap), sink(s), send_req(sends, MPI_REQUEST_NULL), send_cookie(sends, nullptr),
        recv_req(receives, MPI_REQUEST_NULL), recv_buf(receives, nullptr),
        done_idx(std::max(sends, receives)), done_status(std::max(sends, receives)) {
    MAILROOM_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    MAILROOM_MPI(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
    for (int i = sends - 1; i >= 0; --i) free_send.push_back(i);
    for (int i = 0; i < receives; ++i) post(i);
  }

  void post(int i) {
    recv_buf[i] = sink.fresh_buffer();
    MAILROOM_MPI(MPI_Irecv(recv_buf[i], static_cast<int>(capacity), MPI_BYTE, MPI_ANY_SOURCE,
                           k_tag, comm, &recv_req[i]));
  }

  ~impl() {
    for (std::size_t i = 0; i < recv_req.size(); ++i) {
      if (recv_req[i] == MPI_REQUEST_NULL) continue;
      MPI_Cancel(&recv_req[i]);
      MPI_Wait(&recv_req[i], MPI_STATUS_IGNORE);
      // The buffer was the sink's; hand it back as an empty arrival it can recycle.
      sink.received(-1, recv_buf[i], 0);
    }
    for (auto& r : send_req)
      if (r != MPI_REQUEST_NULL) MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Comm_free(&comm);
  }
};

channel::channel(std::size_t capacity, int sends, int receives, channel_sink& sink)
    : impl_(std::make_unique<impl>(capacity, sends, receives, sink)) {}
channel::~channel() = default;

bool channel::can_send() const noexcept { return !impl_->free_send.empty(); }
int channel::sends_in_flight() const noexcept {
  return static_cast<int>(impl_->send_req.size() - impl_->free_send.size());
}

void channel::send(int dest, const std::byte* data, std::size_t bytes, void* cookie) {
  MAILROOM_ASSERT(can_send());
  const int slot = impl_->free_send.back();
  impl_->free_send.pop_back();
  impl_->send_cookie[slot] = cookie;
  MAILROOM_MPI(MPI_Isend(data, static_cast<int>(bytes), MPI_BYTE, dest, k_tag, impl_->comm,
                         &impl_->send_req[slot]));
}

int channel::poll() {
  impl& m = *impl_;
  int completions = 0;
  int n = 0;
  if (m.free_send.size() < m.send_req.size()) {
    MAILROOM_MPI(MPI_Testsome(static_cast<int>(m.send_req.size()), m.send_req.data(), &n,
                              m.done_idx.data(), MPI_STATUSES_IGNORE));
    if (n != MPI_UNDEFINED) {
      for (int k = 0; k < n; ++k) {
        const int slot = m.done_idx[k];
        m.free_send.push_back(slot);
        m.sink.sent(m.send_cookie[slot]);
      }
      completions += n;
    }
  }
  MAILROOM_MPI(MPI_Testsome(static_cast<int>(m.recv_req.size()), m.recv_req.data(), &n,
                            m.done_idx.data(), m.done_status.data()));
  if (n != MPI_UNDEFINED) {
    for (int k = 0; k < n; ++k) {
      const int slot = m.done_idx[k];
      int bytes = 0;
      MAILROOM_MPI(MPI_Get_count(&m.done_status[k], MPI_BYTE, &bytes));
      std::byte* buf = m.recv_buf[slot];
      m.post(slot);
      m.sink.received(m.done_status[k].MPI_SOURCE, buf, static_cast<std::size_t>(bytes));
    }
    completions += n;
  }
  return completions;
}

}  // namespace mailroom::transport
