// SPDX-License-Identifier: MIT
// Joins (Charm's `when`): a handler that runs once messages with the same key have arrived on
// each of several mailboxes of a selector.
#pragma once

#include "mailroom/error.hpp"
#include "mailroom/future.hpp"
#include "mailroom/pe.hpp"
#include "mailroom/selector.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace mailroom {

template <class KeyOf, class H, class... Ts>
class join;

namespace detail {

// The handler of a mailbox that feeds input I of a join (join::input<I>()).
template <std::size_t I, class J>
struct join_input {
  J* j;
  template <class T, class Sel>
  void operator()(const T& msg, pe from, Sel& self) const {
    j->template arrive<I>(msg, from, self);
  }
};

}  // namespace detail

/// A join over messages of types Ts... (at least two), made by make_join<Ts...>(key_of, handler).
/// Input I is fed by one mailbox of a selector, mailbox<T_I>(j.input<I>()); once a message with
/// the same key, key_of(message), has arrived on every input on a PE, the handler runs there with
/// one message of each, as handler(m0, m1, ..., self), handler(m0, m1, ...) or, given the PEs
/// they came from, handler(m0, from0, m1, from1, ..., self). It runs in the handler context of the
/// mailbox whose message completed the match, so it may send where that mailbox's handlers may
/// (an edge of the selector's graph from each input mailbox). Messages with the same key on one
/// input are matched in their order of arrival. The waiting messages are kept per PE, in a hash
/// table by key (std::hash<key>); memory grows with what waits for its partners.
///
/// A message still waiting for a partner when the selector terminates on its PE could never be
/// matched: the job stops with an error that names its key. The join must outlive its selector
/// (declare it first), and its inputs must belong to one selector. Thread-safe with several
/// workers (a lock per arrival then; without workers, none).
template <class KeyOf, class H, class... Ts>
class join {
  static_assert(sizeof...(Ts) >= 2, "join: give at least two message types");
  static_assert((std::is_invocable_v<const KeyOf&, const Ts&> && ...),
                "join: key_of must be callable with a message of every input type");

 public:
  /// The key: what key_of returns for a message of the first input, decayed.
  using key_type = std::decay_t<
      std::invoke_result_t<const KeyOf&, const std::tuple_element_t<0, std::tuple<Ts...>>&>>;
  /// The number of inputs: one per message type.
  static constexpr std::size_t inputs = sizeof...(Ts);

  /// A join that matches by key_of and runs handler (make_join names the message types).
  join(KeyOf key_of, H handler) : key_of_(std::move(key_of)), handler_(std::move(handler)) {}
  join(const join&) = delete;
  join& operator=(const join&) = delete;

  /// The handler for the mailbox that feeds input I: mailbox<T_I>(j.input<I>()).
  template <std::size_t I>
  [[nodiscard]] detail::join_input<I, join> input() noexcept {
    static_assert(I < inputs, "join::input<I>: input index out of range");
    return {this};
  }

  /// Messages waiting for their partners on this PE, over all inputs.
  [[nodiscard]] std::size_t waiting() const {
    const auto lock = guard();
    return waiting_messages_;
  }

 private:
  template <std::size_t, class>
  friend struct detail::join_input;

  template <std::size_t I>
  using type_at = std::tuple_element_t<I, std::tuple<Ts...>>;
  using lists = std::tuple<std::vector<std::pair<Ts, pe>>...>;

  std::unique_lock<std::mutex> guard() const {
    return detail::threads_share_pe() ? std::unique_lock<std::mutex>(mutex_)
                                      : std::unique_lock<std::mutex>();
  }

  template <std::size_t I, class T, class Sel>
  void arrive(const T& msg, pe from, Sel& self) {
    static_assert(std::is_same_v<T, type_at<I>>,
                  "join::input<I>: the mailbox's message type must be the join's type I");
    std::unique_lock<std::mutex> lock = guard();
    if (bound_ == nullptr) bind(self);
    MAILROOM_CHECK(bound_ == static_cast<const void*>(&self),
                   "join: its inputs are mailboxes of two different selectors; a join's "
                   "inputs must all belong to one selector");
    const key_type key = std::invoke(key_of_, msg);
    lists& l = table_[key];
    const bool complete = [&]<std::size_t... J>(std::index_sequence<J...>) {
      return ((J == I || !std::get<J>(l).empty()) && ...);
    }(std::index_sequence_for<Ts...>{});
    if (!complete) {
      std::get<I>(l).emplace_back(msg, from);
      ++waiting_messages_;
      return;
    }
    // One of each, the others' oldest first; taken out before the handler runs (it may send,
    // and with workers another arrival may come meanwhile).
    std::tuple<std::pair<Ts, pe>...> match = [&]<std::size_t... J>(std::index_sequence<J...>) {
      return std::tuple<std::pair<Ts, pe>...>{take<J, I>(l, msg, from)...};
    }(std::index_sequence_for<Ts...>{});
    waiting_messages_ -= inputs - 1;
    if ([&]<std::size_t... J>(std::index_sequence<J...>) {
          return (std::get<J>(l).empty() && ...);
        }(std::index_sequence_for<Ts...>{}))
      table_.erase(key);
    if (lock.owns_lock()) lock.unlock();
    call(match, self, std::index_sequence_for<Ts...>{});
  }

  template <std::size_t J, std::size_t I, class T>
  static std::pair<type_at<J>, pe> take(lists& l, const T& msg, pe from) {
    if constexpr (J == I) {
      return {msg, from};
    } else {
      auto& v = std::get<J>(l);
      std::pair<type_at<J>, pe> front = v.front();
      v.erase(v.begin());
      return front;
    }
  }

  template <class Sel, std::size_t... J>
  void call(const std::tuple<std::pair<Ts, pe>...>& m, Sel& self, std::index_sequence<J...>) {
    if constexpr (std::is_invocable_v<H&, const Ts&..., Sel&>) {
      handler_(std::get<J>(m).first..., self);
    } else if constexpr (std::is_invocable_v<H&, const Ts&...>) {
      handler_(std::get<J>(m).first...);
    } else {
      // handler(m0, from0, m1, from1, ..., self): the pairs flattened.
      std::apply(
          [&](const auto&... a) {
            static_assert(std::is_invocable_v<H&, decltype(a)..., Sel&>,
                          "join handler: must be callable as handler(m0, m1, ..., self), "
                          "handler(m0, m1, ...) or handler(m0, from0, m1, from1, ..., self), "
                          "with the messages in the order of the join's types");
            handler_(a..., self);
          },
          std::tuple_cat(
              std::tuple<const Ts&, const pe&>(std::get<J>(m).first, std::get<J>(m).second)...));
    }
  }

  template <class Sel>
  void bind(Sel& self) {
    bound_ = &self;
    selector_id_ = self.ref().id();
    // Once the selector has terminated here, nothing more can arrive: what still waits is
    // unmatched for ever. (Futures are worker 0's: a pool worker that handled the first message,
    // or the main flow beside a progress thread, hands the watch to it.)
    auto watch = [this, &self] {
      detail::notify(self.finished_future(), detail::callback([this] { check_unmatched(); }));
    };
    if (detail::t_worker > 0)
      detail::complete_on_runtime_thread(detail::callback(watch));
    else
      watch();
  }

  void check_unmatched() {
    const auto lock = guard();
    if (waiting_messages_ == 0) return;
    // (Not a structured binding: clang 14 cannot capture one in a lambda.)
    const key_type& key = table_.begin()->first;
    const lists& l = table_.begin()->second;
    std::string have, missing;
    [&]<std::size_t... J>(std::index_sequence<J...>) {
      ((std::get<J>(l).empty() ? missing : have).append(fmt::format(" {}", J)), ...);
    }(std::index_sequence_for<Ts...>{});
    std::string key_text;
    if constexpr (fmt::is_formattable<key_type>::value) key_text = fmt::format(" {}", key);
    MAILROOM_FAIL(
        "join on selector #{}: {} messages left without partners on this PE when the "
        "selector terminated (in {} keys); e.g. key{} arrived on input(s){} but never "
        "on input(s){}. Every key must arrive on each input of a join",
        selector_id_, waiting_messages_, table_.size(), key_text, have, missing);
  }

  KeyOf key_of_;
  H handler_;
  std::unordered_map<key_type, lists> table_;
  std::size_t waiting_messages_ = 0;
  const void* bound_ = nullptr;
  std::uint64_t selector_id_ = 0;
  mutable std::mutex mutex_;
};

/// A join of messages of types Ts... (see join): make_join<A, B>(key_of, handler).
template <class... Ts, class KeyOf, class H>
[[nodiscard]] join<KeyOf, H, Ts...> make_join(KeyOf key_of, H handler) {
  return join<KeyOf, H, Ts...>(std::move(key_of), std::move(handler));
}

}  // namespace mailroom
