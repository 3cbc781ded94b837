// SPDX-License-Identifier: MIT
// Transport requests as pending operations of the scheduler.
#include "pgas/pending.hpp"

#include "mailroom/detail/tasks.hpp"
#include "mailroom/error.hpp"
#include "runtime/engine.hpp"

#include "common/trace.hpp"

#include <fmt/format.h>

namespace mailroom::detail {

namespace {
class request_op final : public pending_op {
 public:
  request_op(std::unique_ptr<transport::request> req, const op_label& label)
      : req_(std::move(req)), label_(label) {}
  bool test() override { return req_->test(); }
  transport::request* transport_request() noexcept override { return req_.get(); }
  void complete() override {
    if (MAILROOM_UNLIKELY(label_.traced_from >= 0)) trace_operation(label_);
    req_.reset();
    state_.set();
  }
  [[nodiscard]] std::string describe() const override {
    return fmt::format("{} {}", label_.what,
                       fmt::format(fmt::runtime(label_.detail), label_.a, label_.b));
  }
  // The future's state is this operation's (one allocation for both): the future keeps it.
  static future<void> get_future(const std::shared_ptr<request_op>& op) {
    return future_of(std::shared_ptr<future_state<void>>(op, &op->state_));
  }

 private:
  std::unique_ptr<transport::request> req_;
  future_state<void> state_;
  op_label label_;
};
}  // namespace

void trace_operation(const op_label& label) {
  const std::uint32_t k = trace::kind_for(reinterpret_cast<std::uintptr_t>(label.what), [&] {
    return trace::kind(label.what, "collectives", {"pes", "number", nullptr, nullptr});
  });
  trace::record(k, label.traced_from, trace::now() - label.traced_from,
                {static_cast<std::int64_t>(label.a), static_cast<std::int64_t>(label.b), 0, 0});
}

// Not tested when started: each test is a pass of MPI's progress engine over everything in
// flight, so testing at each start would cost the square of what is in flight.
future<void> track(std::unique_ptr<transport::request> req, const op_label& label) {
  const runtime_turn turn(label.what);
  auto op = std::allocate_shared<request_op>(pool_allocator<request_op>(), std::move(req), label);
  future<void> f = request_op::get_future(op);
  engine::pending.push_back(std::move(op));
  return f;
}

}  // namespace mailroom::detail
