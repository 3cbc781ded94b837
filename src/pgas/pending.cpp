// Transport requests as pending operations of the scheduler.
#include "pgas/pending.hpp"

#include <fmt/format.h>

namespace mailroom::detail {

namespace {
class request_op final : public pending_op {
 public:
  request_op(std::unique_ptr<transport::request> req, const char* what, std::string detail)
      : req_(std::move(req)), what_(what), detail_(std::move(detail)) {}
  bool test() override { return req_->test(); }
  transport::request* transport_request() noexcept override { return req_.get(); }
  void complete() override {
    req_.reset();
    done_.set_value();
  }
  [[nodiscard]] std::string describe() const override {
    return fmt::format("{} {}", what_, detail_);
  }
  [[nodiscard]] future<void> get_future() const { return done_.get_future(); }

 private:
  std::unique_ptr<transport::request> req_;
  promise<void> done_;
  const char* what_;
  std::string detail_;
};
}  // namespace

// Not tested when started: each test is a pass of MPI's progress engine over everything in
// flight, so testing at each start would cost the square of what is in flight.
future<void> track(std::unique_ptr<transport::request> req, const char* what,
                   std::string detail) {
  auto op = std::make_shared<request_op>(std::move(req), what, std::move(detail));
  future<void> f = op->get_future();
  scheduler::pending.push_back(std::move(op));
  return f;
}


}  // namespace mailroom::detail
