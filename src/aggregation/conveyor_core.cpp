// The untyped conveyor: buffer hand-off, local delivery, and the end-of-stream count exchange.
#include "mailroom/detail/conveyor_core.hpp"

namespace mailroom::detail {

namespace {
exchange& running_exchange() {
  MAILROOM_CHECK(exchange::running(),
                 "a conveyor or mailbox was created before mailroom::runtime exists (construct "
                 "`mailroom::runtime rt(argc, argv);` first)");
  return exchange::get();
}
}  // namespace

conveyor_core::conveyor_core(bool delta_records, std::uint32_t signature)
    : ex_(running_exchange()),
      id_(0),
      capacity_(static_cast<std::uint32_t>(ex_.capacity())),
      me_(ex_.me()),
      fills_(delta_records ? 0 : static_cast<std::size_t>(ex_.pes())),
      lanes_(delta_records ? static_cast<std::size_t>(ex_.pes()) : 0),
      signature_(signature),
      sent_to_(static_cast<std::size_t>(ex_.pes()), 0),
      bytes_to_(static_cast<std::size_t>(ex_.pes()), 0),
      buffers_to_(static_cast<std::size_t>(ex_.pes()), 0),
      outstanding_(static_cast<std::size_t>(ex_.pes()), 0),
      credits_(0),
      ended_from_(static_cast<std::size_t>(ex_.pes()), 0),
      links_open_(ex_.pes() - 1) {
  // Every PE creates the same conveyors in the same order with the same configuration, so the
  // credits agree: what a sender may have in flight is what the receiver reserved for arrivals.
  const std::size_t left = ex_.budget_left();
  credits_ = ex_.reserve_credits();
  MAILROOM_CHECK(credits_ > 0,
                 "mailbox #{} does not fit in MAILROOM_BUDGET_BYTES={}: a mailbox needs at least "
                 "3 buffers per PE (one filling, one in flight, one arrived): {} PEs x 3 x {} "
                 "bytes, but only {} bytes are left next to the {} live mailboxes and the posted "
                 "receives (raise the budget, or lower MAILROOM_BUFFER_BYTES)",
                 ex_.live_conveyors(), current_config().budget_bytes, dests(), capacity_,
                 left, ex_.live_conveyors());
  MAILROOM_ASSERT(capacity_ >= k_header_bytes + k_delta_run_header + 8 * k_delta_words);
  for (std::size_t w = 1; w <= k_delta_words; ++w)
    delta_limit_[w] = capacity_ - static_cast<std::uint32_t>(k_delta_run_header + 8 * w);
  // An absent buffer looks full, so the first push for a destination takes the slow path.
  for (std::size_t d = 0; d < dests(); ++d) fill_of(d).reset(capacity_);
  id_ = ex_.attach(this);
}

conveyor_core::~conveyor_core() {
  for (std::size_t d = 0; d < dests(); ++d)
    if (std::byte* buf = fill_of(d).buf; buf != nullptr) ex_.release(buf);
  for (auto& a : arrivals_) ex_.release_arrival(a.source, a.buf);
  for (auto& [dest, buf] : backlog_) ex_.release(buf);
  ex_.backlog_changed(-static_cast<int>(backlog_.size()));
  // Acknowledgements still to come are dropped on arrival (this conveyor is gone).
  ex_.unacknowledged -= unacknowledged();
  ex_.release_credits(credits_);
  ex_.add_ended(*this);
  ex_.detach(id_);
}

bool conveyor_core::make_room(int dest, std::size_t need) noexcept {
  fill& f = fill_of(static_cast<std::size_t>(dest));
  // After close() every buffer has been shipped, so any later push lands here.
  MAILROOM_CHECK(state_ == stream::open || state_ == stream::flushing,
                 "a message was sent to mailbox #{} after its end of stream on this PE "
                 "(send after done, or a missing edge in the dependency graph)", id_);
  if (f.buf != nullptr && f.items() > 0) {
    if (!g_may_spill && !can_ship(dest)) {
      ++refused_;
      return false;
    }
    ship(dest);
  }
  if (f.buf == nullptr) {
    f.buf = ex_.acquire_for(dest);
    f.reset(static_cast<std::uint32_t>(k_header_bytes));
    if (!lanes_.empty()) {  // runs restart
      lanes_[static_cast<std::size_t>(dest)].rs.count_at = 0;
      lanes_[static_cast<std::size_t>(dest)].open = 0;
    }
  }
  MAILROOM_CHECK(f.used() + need <= capacity_,
                 "a message of {} bytes does not fit in MAILROOM_BUFFER_BYTES={} ({} bytes of "
                 "each buffer are its header): raise MAILROOM_BUFFER_BYTES or send less",
                 need, capacity_, k_header_bytes);
  return true;
}

bool conveyor_core::can_ship(int dest) const noexcept {
  // The own PE: no more than 2c buffers arrived and unhandled, as the reservation counts.
  if (dest == me_) return arrivals_.size() < 2 * static_cast<std::size_t>(credits_);
  return outstanding_[static_cast<std::size_t>(dest)] < credits_;
}

void conveyor_core::ship(int dest) noexcept {
  fill& f = fill_of(static_cast<std::size_t>(dest));
  if (!lanes_.empty()) close_run(lanes_[static_cast<std::size_t>(dest)]);
  auto* h = reinterpret_cast<buffer_header*>(f.buf);
  *h = buffer_header{id_, f.used(), f.items(), 0, signature_, 0};
  const auto d = static_cast<std::size_t>(dest);
  sent_to_[d] += f.items();
  bytes_to_[d] += f.used() - static_cast<std::int64_t>(k_header_bytes);
  ++buffers_to_[d];
  sent_items_ += f.items();
  ex_.items_shipped += f.items();
  if (dest == me_) {
    deliver(me_, f.buf);  // own PE: no MPI
  } else if (outstanding_[d] < credits_) {
    ++outstanding_[d];
    ++ex_.unacknowledged;
    ex_.send(dest, f.buf);
  } else {
    backlog_.emplace_back(dest, f.buf);
    ex_.backlog_changed(+1);
  }
  f.buf = nullptr;
  f.reset(capacity_);
}

bool conveyor_core::flush(bool force) {
  bool all = true;
  for (std::size_t d = 0; d < dests(); ++d) {
    if (const fill& f = fill_of(d); f.buf == nullptr || f.items() == 0) continue;
    if (!force && !can_ship(static_cast<int>(d))) {
      all = false;
      continue;
    }
    ship(static_cast<int>(d));
  }
  return all;
}

void conveyor_core::credit(int dest) noexcept {
  --outstanding_[static_cast<std::size_t>(dest)];
  --ex_.unacknowledged;
  for (auto it = backlog_.begin(); it != backlog_.end(); ++it) {
    if (it->first != dest) continue;
    std::byte* buf = it->second;
    backlog_.erase(it);
    ex_.backlog_changed(-1);
    ++outstanding_[static_cast<std::size_t>(dest)];
    ++ex_.unacknowledged;
    ex_.send(dest, buf);
    return;
  }
}

void conveyor_core::deliver(int source, std::byte* buf) noexcept {
  received_items_ += reinterpret_cast<const buffer_header*>(buf)->items;
  arrivals_.push_back(arrival{buf, source});
}

void conveyor_core::pop_front() noexcept {
  const arrival a = arrivals_.front();
  arrivals_.pop_front();
  processed_items_ += a.header().items;
  ex_.items_handled += a.header().items;
  ex_.handled(a.source, a.buf, id_);
}

std::int64_t conveyor_core::filling_items(std::vector<int>* to, std::size_t most) const {
  std::int64_t items = 0;
  for (std::size_t d = 0; d < dests(); ++d) {
    const fill& f = lanes_.empty() ? fills_[d] : lanes_[d].f;
    if (f.buf == nullptr || f.items() == 0) continue;
    items += f.items();
    if (to != nullptr && to->size() < most) to->push_back(static_cast<int>(d));
  }
  return items;
}

std::int64_t conveyor_core::unacknowledged(std::vector<int>* to, std::size_t most) const {
  std::int64_t n = 0;
  for (std::size_t d = 0; d < outstanding_.size(); ++d) {
    if (outstanding_[d] == 0) continue;
    n += outstanding_[d];
    if (to != nullptr && to->size() < most) to->push_back(static_cast<int>(d));
  }
  return n;
}

void conveyor_core::close() noexcept {
  if (state_ == stream::open) state_ = stream::flushing;
}

// Conveyors' end of stream, per link: once this PE has closed, it ships every partly filled
// buffer and then tells each other PE how many items it shipped there in all. A PE has ended
// once every link has, and it has received and processed what they announced. End messages need
// no collective and no communicator of their own, and may overtake the link's last buffers (MPI
// matches a source's messages in order, but its posted receives complete in any order): the
// count tells the receiver what is still to come.
bool conveyor_core::step_stream() {
  switch (state_) {
    case stream::open:
      return false;
    case stream::flushing:
      flush(true);
      for (int d = 0; d < static_cast<int>(sent_to_.size()); ++d)
        if (d != me_) ex_.send_end(d, id_, signature_, sent_to_[static_cast<std::size_t>(d)]);
      expected_ += sent_to_[static_cast<std::size_t>(me_)];
      state_ = stream::draining;
      [[fallthrough]];
    case stream::draining:
      if (links_open_ > 0 || received_items_ < expected_ || !arrivals_.empty()) return false;
      MAILROOM_CHECK(received_items_ == expected_,
                     "mailbox #{} received {} items but {} were sent to this PE", id_,
                     received_items_, expected_);
      state_ = stream::ended;
      [[fallthrough]];
    case stream::ended:
      return true;
  }
  return false;
}

void conveyor_core::end_of_stream(int source, std::int64_t items) noexcept {
  std::uint8_t& ended = ended_from_[static_cast<std::size_t>(source)];
  MAILROOM_CHECK(ended == 0, "mailbox #{}: PE {} ended its stream here twice", id_, source);
  ended = 1;
  --links_open_;
  expected_ += items;
}

int conveyor_core::open_links(std::vector<int>* from, std::size_t most) const {
  if (from != nullptr)
    for (std::size_t p = 0; p < ended_from_.size() && from->size() < most; ++p)
      if (ended_from_[p] == 0 && static_cast<int>(p) != me_) from->push_back(static_cast<int>(p));
  return links_open_;
}

}  // namespace mailroom::detail
