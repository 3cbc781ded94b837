// SPDX-License-Identifier: MIT
// Aggregated one-sided reads built on actors: gather(table, indices, out) reads every element a
// PE asks for from its owner through an internal selector (a request mailbox whose handler
// answers into a reply mailbox), so the reads travel aggregated, as the hand-written selector
// would send them, and complete a future (or return) once all have arrived.
#pragma once

#include "mailroom/distribution.hpp"
#include "mailroom/future.hpp"
#include "mailroom/runtime.hpp"
#include "mailroom/selector.hpp"
#include "mailroom/symmetric.hpp"

#include <cstdint>
#include <memory>
#include <span>
#include <utility>

namespace mailroom {

namespace detail {
struct gather_request {
  std::uint64_t index, slot;  // the element on its owner; where the answer goes here
};
template <class T>
struct gather_reply {
  std::uint64_t slot;
  T value;
};

// The owner answers a request from its part of the table; the asker stores the answer.
template <class T>
struct gather_answer {
  symmetric_array<T> table;
  template <class Self>
  void operator()(const gather_request& q, pe from, Self& self) const {
    self.template send<1>(from, gather_reply<T>{q.slot, table[q.index]});
  }
};
template <class T>
struct gather_store {
  std::span<T> out;
  void operator()(const gather_reply<T>& r, pe) const { out[r.slot] = r.value; }
};
template <class T>
using gather_selector = selector<mailbox_spec<gather_request, gather_answer<T>>,
                                 mailbox_spec<gather_reply<T>, gather_store<T>>>;

// The selector of a gather_async, kept until it terminates here, then destroyed.
template <class Selector>
class gather_op final : public pending_op {
 public:
  explicit gather_op(std::unique_ptr<Selector> s) : sel_(std::move(s)) {}
  bool test() override { return sel_->finished(); }
  void complete() override {
    sel_.reset();
    done_.set_value();
  }
  [[nodiscard]] std::string describe() const override { return "gather (aggregated reads)"; }
  [[nodiscard]] future<void> get_future() const { return done_.get_future(); }

 private:
  std::unique_ptr<Selector> sel_;
  promise<void> done_;
};

template <class Selector, class T, class I, class Where>
void send_gather_requests(Selector& sel, std::span<const I> indices, std::span<T> out,
                          Where& where) {
  MAILROOM_CHECK(out.size() >= indices.size(), "gather: {} indices, room for {} values",
                 indices.size(), out.size());
  for (std::size_t k = 0; k < indices.size(); ++k) {
    if constexpr (distribution<Where>) {
      const place p = place_of(where, static_cast<std::int64_t>(indices[k]));
      sel.template send<0>(p.owner, gather_request{p.local, k});
    } else {
      const auto [owner, local] = where(indices[k]);
      sel.template send<0>(owner, gather_request{static_cast<std::uint64_t>(local), k});
    }
  }
  sel.template done<0>();
}
}  // namespace detail

/// Collective (every PE calls it, in the same order as its other selectors): out[k] = the element
/// of `table` at indices[k]'s place under the distribution `where` (cyclic by default; or a
/// callable that returns a {PE, local index} pair), for every k.
/// The reads travel aggregated through actor messages; handlers run meanwhile. Returns once all
/// of this PE's values have arrived and every PE's requests to it were answered.
template <class T, class I, class Where = cyclic>
void gather(symmetric_array<T> table, std::span<const I> indices, std::span<T> out,
            Where where = {}) {
  const detail::runtime_turn turn;
  detail::gather_selector<T> sel{mailbox<detail::gather_request>(detail::gather_answer<T>{table}),
                                 mailbox<detail::gather_reply<T>>(detail::gather_store<T>{out})};
  detail::send_gather_requests(sel, indices, out, where);
  sel.wait();
}

/// gather() without waiting: the future is ready once this PE's values are all in `out` and
/// its part of the exchange has terminated. `out` (and the table) stay valid until then.
template <class T, class I, class Where = cyclic>
[[nodiscard]] future<void> gather_async(symmetric_array<T> table, std::span<const I> indices,
                                        std::span<T> out, Where where = {}) {
  const detail::runtime_turn turn;
  using sel_type = detail::gather_selector<T>;
  auto sel =
      std::make_unique<sel_type>(mailbox<detail::gather_request>(detail::gather_answer<T>{table}),
                                 mailbox<detail::gather_reply<T>>(detail::gather_store<T>{out}));
  detail::send_gather_requests(*sel, indices, out, where);
  auto op = std::make_shared<detail::gather_op<sel_type>>(std::move(sel));
  future<void> f = op->get_future();
  detail::add_pending(std::move(op));
  return f;
}

}  // namespace mailroom
