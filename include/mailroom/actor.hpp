// SPDX-License-Identifier: MIT
// Actors: a selector with one mailbox. mailroom::actor<T> takes any handler (called through one
// indirect call per message); mailroom::actor{mailroom::mailbox<T>(handler)} keeps the handler's
// type and inlines it; mailroom::actor<> takes lambda messages.
#pragma once

#include "mailroom/selector.hpp"

#include <functional>
#include <typeinfo>

namespace mailroom {

namespace detail {
/// A handler of T messages whose type is erased (for actor<T> written without its handler type).
/// (For span_of<U> it takes the std::span<const U>, for serialized<U> the U: message_arg_t.)
template <class T>
struct erased_handler {
  using arg = message_arg_t<T>;
  /// The handler's own type: part of the mailbox's signature (two actor<T> of different
  /// lambdas differ, wherever they are constructed) and named by its errors.
  const std::type_info* origin = nullptr;
  std::function<void(const arg&, pe)> fn;
  template <class F>
    requires(!std::is_same_v<std::decay_t<F>, erased_handler>)
  erased_handler(F f)  // NOLINT(google-explicit-constructor): built from the user's lambda
      : origin(&typeid(F)), fn([g = std::move(f)](const arg& msg, pe from) mutable {
          if constexpr (std::is_invocable_v<F&, const arg&, pe>) {
            g(msg, from);
          } else if constexpr (std::is_invocable_v<F&, const arg&>) {
            g(msg);
          } else {
            static_assert(std::is_invocable_v<F&, const arg&>,
                          "actor<T> handler: must be callable as handler(msg, from) or "
                          "handler(msg)");
          }
        }) {}
  void operator()(const arg& msg, pe from) { fn(msg, from); }
};

template <class T, class H>
struct actor_spec {
  using type = mailbox_spec<T, H>;
};
template <>
struct actor_spec<void, void> {
  using type = lambdas;
};
}  // namespace detail

/// An actor: one mailbox of T messages (or of lambda messages when T is void), partitioned over
/// all PEs. Collective construction; send, done, wait as for a selector.
template <class T = void,
          class H = std::conditional_t<std::is_void_v<T>, void, detail::erased_handler<T>>>
class actor {
  using spec = typename detail::actor_spec<T, H>::type;

 public:
  /// A lambda actor (T = void).
  actor(source_location loc = source_location::current())
    requires std::is_void_v<T>
      : sel_(spec{}, loc) {}
  /// A typed actor from any handler(msg, from) or handler(msg).
  template <class F>
    requires(!std::is_void_v<T> && !std::is_same_v<std::decay_t<F>, mailbox_spec<T, H>> &&
             !std::is_same_v<std::decay_t<F>, actor>)
  explicit actor(F&& handler, source_location loc = source_location::current())
      : sel_(spec{H(std::forward<F>(handler))}, loc) {}
  /// A typed actor whose handler type is kept (inlined into the delivery loop).
  template <class U = T>
    requires(!std::is_void_v<U>)
  explicit actor(mailbox_spec<U, H> s, source_location loc = source_location::current())
      : sel_(std::move(s), loc) {}
  /// The same over team t: partitioned over its members, addressed by rank there (see selector).
  explicit actor(const team& t, source_location loc = source_location::current())
    requires std::is_void_v<T>
      : sel_(t, spec{}, loc) {}
  /// A typed actor over team t from any handler(msg, from) or handler(msg).
  template <class F>
    requires(!std::is_void_v<T> && !std::is_same_v<std::decay_t<F>, mailbox_spec<T, H>>)
  actor(const team& t, F&& handler, source_location loc = source_location::current())
      : sel_(t, spec{H(std::forward<F>(handler))}, loc) {}
  /// A typed actor over team t whose handler type is kept.
  template <class U = T>
    requires(!std::is_void_v<U>)
  actor(const team& t, mailbox_spec<U, H> s, source_location loc = source_location::current())
      : sel_(t, std::move(s), loc) {}

  /// Sends msg to this actor's mailbox on PE dest (for `span_of<U>` a `std::span<const U>`, for
  /// `serialized<U>` a `U`).
  template <class U = T>
    requires(!std::is_void_v<U>)
  void send(pe dest, const detail::message_arg_t<std::type_identity_t<U>>& msg,
            source_location loc = source_location::current()) {
    sel_.template send<0>(dest, msg, loc);
  }
  /// Sends to the owner of global index g under distribution d (see selector::send): the local
  /// index itself to an actor of an integer type, value at it to one of at<V>.
  template <distribution D, class U = T>
    requires std::is_integral_v<U>
  void send(const D& d, std::int64_t g, source_location loc = source_location::current()) {
    sel_.template send<0>(d, g, loc);
  }
  /// (The at<V> form.)
  template <distribution D, class U = T>
    requires detail::is_at<U>
  void send(const D& d, std::int64_t g, const typename U::value_type& value,
            source_location loc = source_location::current()) {
    sel_.template send<0>(d, g, value, loc);
  }
  /// Sends a closure to run on PE dest.
  template <class L>
    requires std::is_void_v<T>
  void send(pe dest, const L& closure, source_location loc = source_location::current()) {
    sel_.template send<0>(dest, closure, loc);
  }
  /// Sends a closure to run on g's owner under d, called with the local index (see selector).
  template <distribution D, class L>
    requires std::is_void_v<T>
  void send(const D& d, std::int64_t g, const L& closure,
            source_location loc = source_location::current()) {
    sel_.template send<0>(d, g, closure, loc);
  }
  /// This PE sends no more to this actor (from outside its handler).
  void done(source_location loc = source_location::current()) { sel_.template done<0>(loc); }
  /// Names the actor on this PE, for errors, the watchdog and statistics (see selector::name).
  void name(std::string_view n) { sel_.name(n); }
  /// Sends partly filled buffers now (latency over aggregation).
  void flush() { sel_.flush(); }
  /// Runs handlers until the actor has terminated on this PE.
  void wait(source_location loc = source_location::current()) { sel_.wait(loc); }
  /// Whether the actor has terminated on this PE, as wait() would return (runs no handlers).
  [[nodiscard]] bool finished() const noexcept { return sel_.finished(); }
  /// Ready once the actor has terminated on this PE (see selector::finished_future).
  [[nodiscard]] future<void> finished_future() const { return sel_.finished_future(); }
  /// A trivially copyable handle to the actor's selector, for lambda messages to capture
  /// (see selector::ref).
  [[nodiscard]] auto ref() const noexcept { return sel_.ref(); }
  /// Gives this actor's mailbox a priority (see selector::priority).
  void priority(int p) { sel_.template priority<0>(p); }
  /// Disables this actor's mailbox on this PE until enable() (see selector::disable).
  void disable() { sel_.template disable<0>(); }
  /// Enables this actor's mailbox again on this PE (see selector::enable).
  void enable() { sel_.template enable<0>(); }
  /// Whether this actor's mailbox is enabled on this PE (actors start enabled).
  [[nodiscard]] bool enabled() const { return sel_.template enabled<0>(); }
  /// Declares that upstream's handlers send to this actor (see selector::receives_from).
  template <class S>
  void receives_from(const S& upstream, source_location loc = source_location::current()) {
    sel_.receives_from(upstream, loc);
  }

 private:
  selector<spec> sel_;
};

/// `mailroom::actor a{mailroom::mailbox<T>(handler)}` keeps the handler's type H.
template <class T, class H>
actor(mailbox_spec<T, H>) -> actor<T, H>;

}  // namespace mailroom
