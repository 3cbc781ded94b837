// SPDX-License-Identifier: MIT
// The termination protocols (see protocols.hpp): quiescence waves and the end of stream.
#include "termination/protocols.hpp"

#include "mailroom/detail/signature.hpp"
#include "mailroom/error.hpp"

#include "aggregation/exchange.hpp"
#include "common/trace.hpp"

namespace mailroom::detail {

// Why this is correct (Mattern's four-counter method). Counters are per PE and monotonic: S
// counts items of the component's mailboxes handed to the transport, R counts items whose
// handler has returned. A PE samples only after its component is closed (it will never again
// send into the component from outside it) and after shipping every partly filled buffer, so
// every push it ever made before the sample is counted in S. Wave k+1 samples on every PE only
// after wave k completed everywhere (its result needs every contribution). Let T be the end of
// wave k. If R summed over wave k equals S summed over wave k+1, then: every item sent before T
// (at most S_{k+1}) was processed before T (at least R_k), and no item was sent between T and
// the wave k+1 samples. After T no handler of the component can run (nothing is left to
// process) and no outside code sends, so nothing is ever sent again: the component terminated,
// and every PE learns it from the same wave. Cost: at least two waves, each one non-blocking
// allreduce of two integers (O(log P) rounds); a wave is started only when the PE has nothing of
// the component left to process, so waves do not compete with work.
bool quiescence::step(transport::collective_context& ctx, bool ready, std::int64_t sent,
                      std::int64_t processed) {
  if (done_) return true;
  if (MAILROOM_UNLIKELY(disagreed_)) return false;
  if (in_flight_) {
    if (!ctx.test()) return false;
    in_flight_ = false;
    ++waves_;
    const std::int64_t h = signature_ >> 12, members = out_[2];
    if (MAILROOM_UNLIKELY(out_[3] != members * h || out_[4] != members * h * h)) {
      disagree();
      return false;  // (for ever: the PE that differs stops the job)
    }
    if (MAILROOM_UNLIKELY(detail::trace::g_on))
      detail::trace::record(detail::trace::builtin().wave, wave_started_,
                            detail::trace::now() - wave_started_, {waves_, out_[0], out_[1], 0});
    if (prev_[1] >= 0 && prev_[1] == out_[0] && out_[0] == out_[1]) {
      done_ = true;
      return true;
    }
    prev_[0] = out_[0];
    prev_[1] = out_[1];
  }
  if (!ready) return false;
  in_[0] = sent;
  in_[1] = processed;
  const std::int64_t h = signature_ >> 12;
  in_[2] = 1;
  in_[3] = h;
  in_[4] = h * h;
  in_[5] = first_ ? static_cast<std::int64_t>(signature_) : 0;
  in_[6] = first_ ? transport::rank() : 0;
  if (MAILROOM_UNLIKELY(detail::trace::g_on)) wave_started_ = detail::trace::now();
  ctx.start_allreduce_sum(in_, out_, k_wave);
  in_flight_ = true;
  return false;
}

void quiescence::disagree() {
  const auto theirs = static_cast<std::uint32_t>(out_[5]);
  const auto first = static_cast<int>(out_[6]);
  // A PE whose signature differs from the first member's speaks for both; the others wait for
  // it to stop the job (it has this wave too), starting no more waves.
  disagreed_ = true;
  if (theirs == signature_) return;
  MAILROOM_FAIL(
      "PEs constructed their selectors, or closed their cycles of selectors, in different "
      "orders: the termination waves of {} here met, on PE {}, those of {}. Every PE must "
      "construct its selectors and declare the receives_from that close cycles in the same "
      "order",
      describe_signature(signature_), first, exchange::get().describe_on(first, theirs));
}

bool step_stream(conveyor_core& conveyor) {
  if (!conveyor.closed()) conveyor.close();
  return conveyor.step_stream();
}

cycle_waves::cycle_waves(transport::group* members, std::uint32_t signature, bool first)
    : ctx_(members != nullptr ? std::make_unique<transport::collective_context>(*members)
                              : std::make_unique<transport::collective_context>()) {
  waves_.agree_on(signature, first);
}

bool cycle_waves::step(std::span<conveyor_core* const> conveyors, bool ready) {
  std::int64_t sent = 0, processed = 0;
  for (const conveyor_core* c : conveyors)
    if (c->has_arrivals() || c->forwarding()) ready = false;
  if (ready) {
    for (conveyor_core* c : conveyors) {
      if (!c->flush(false)) ready = false;
      sent += c->sent_items();
      processed += c->processed_items();
    }
  }
  return waves_.step(*ctx_, ready, sent, processed);
}

}  // namespace mailroom::detail
