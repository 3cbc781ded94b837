// SPDX-License-Identifier: MIT
// Futures and promises: values that become available later (a non-blocking collective's result,
// a remote read, a selector's termination). Waiting on one runs the progress engine, so a PE that
// waits keeps taking in messages and acknowledging them; continuations (then) run once the value
// is there, from the progress engine or at once if it already is.
#pragma once

#include "mailroom/detail/callback.hpp"
#include "mailroom/detail/small_pool.hpp"
#include "mailroom/detail/tasks.hpp"
#include "mailroom/error.hpp"

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace mailroom {

template <class T = void>
class future;
template <class T = void>
class promise;

namespace detail {
template <class T>
struct future_state;
/// Runs fn once f is ready (at once if it is).
template <class T>
void notify(const future<T>& f, callback fn);
/// A future of `state` (which the caller sets: detail::track keeps it inside its operation).
template <class T>
future<T> future_of(std::shared_ptr<future_state<T>> state);
/// Runs the progress engine until ready(state) (refused inside a handler, and before the
/// runtime exists unless already ready). `what` names the wait for the watchdog and errors.
void wait_until(bool (*ready)(const void*), const void* state, const char* what);

template <class T>
struct is_future : std::false_type {};
template <class T>
struct is_future<future<T>> : std::true_type {};

// What a future holds: the value once set, and the continuations to run then. A future's state
// belongs to the PE that created it (one thread); it is shared by the promise and its futures.
template <class T>
struct future_state {
  using stored = std::conditional_t<std::is_void_v<T>, bool, T>;
  std::optional<stored> value;
  // Set once value is (release): a pool worker waiting for the value reads it (acquire).
  std::atomic<bool> is_set{false};
  // The continuations to run, in order: the first on its own (most futures have one at most,
  // and a list would cost an allocation more each).
  callback first;
  std::vector<callback> more;

  [[nodiscard]] bool ready() const noexcept { return is_set.load(std::memory_order_acquire); }
  template <class... V>
  void set(V&&... v) {
    const runtime_turn turn;  // (MAILROOM_PROGRESS=thread: the main flow's)
    MAILROOM_CHECK(t_worker <= 0,
                   "promise: a value set from a task on worker {}: continuations run on worker "
                   "0; return the value from mailroom::async instead",
                   t_worker);
    MAILROOM_CHECK(!value.has_value(), "promise: a value was set twice");
    if constexpr (std::is_void_v<T>)
      value.emplace(true);
    else
      value.emplace(std::forward<V>(v)...);
    is_set.store(true, std::memory_order_release);
    // A continuation may add continuations to this state (then() on a ready future runs at
    // once), so take them first.
    if (!first) return;
    auto run = std::move(first);
    auto rest = std::move(more);
    more.clear();
    run();
    for (auto& f : rest) f();
  }
  void on_ready(callback f) {
    const runtime_turn turn;
    MAILROOM_CHECK(t_worker <= 0,
                   "then() or when_all() called from a task on worker {}: continuations are "
                   "attached and run on worker 0; from a task, get() the value instead",
                   t_worker);
    if (ready())
      f();
    else if (!first)
      first = std::move(f);
    else
      more.push_back(std::move(f));
  }
};

template <class T>
std::shared_ptr<future_state<T>> new_state() {
  return std::allocate_shared<future_state<T>>(pool_allocator<future_state<T>>());
}

// The future type a continuation's result makes: future<R>, or R itself when R is a future
// (then() unwraps, so that chaining asynchronous steps gives one future, not a future of one).
template <class R>
struct then_result {
  using type = future<R>;
};
template <class U>
struct then_result<future<U>> {
  using type = future<U>;
};

// What then(f) calls: f(value), or f() on a future<void>.
template <class T, class F>
struct continuation_result {
  using type = std::invoke_result_t<F&, const T&>;
};
template <class F>
struct continuation_result<void, F> {
  using type = std::invoke_result_t<F&>;
};
template <class T, class F>
decltype(auto) call_with(F& f, const future_state<T>& s) {
  if constexpr (std::is_void_v<T>)
    return f();
  else
    return f(*s.value);
}
template <class T, class P>
void forward_value(const future_state<T>& s, const P& p) {
  if constexpr (std::is_void_v<T>)
    p.set_value();
  else
    p.set_value(T(*s.value));
}
}  // namespace detail

/// The producing side of a future: set its value once; every future from get_future() becomes
/// ready then and runs its continuations. Cheap to copy (copies share the value).
template <class T>
class promise {
 public:
  promise() : state_(detail::new_state<T>()) {}

  /// A future of this promise's value (any number of them; they share it).
  [[nodiscard]] future<T> get_future() const { return future<T>(state_); }

  /// Sets the value and runs the continuations waiting on it (before returning). Once only.
  template <class U = T>
    requires(!std::is_void_v<U>)
  void set_value(U&& v) const {
    const auto keep = state_;  // (a continuation may destroy this promise)
    keep->set(std::forward<U>(v));
  }
  /// Makes the event happen (T = void) and runs the continuations waiting on it. Once only.
  void set_value() const
    requires std::is_void_v<T>
  {
    const auto keep = state_;
    keep->set();
  }

 private:
  std::shared_ptr<detail::future_state<T>> state_;
};

/// A value of T that becomes available later (T = void: an event). Copies share the value, as
/// std::shared_future's do. Belongs to the PE that created it.
///
/// Waiting (get(), wait()) runs the progress engine: handlers run meanwhile and the PE keeps
/// taking in buffers, so a peer waiting on this PE is never stuck. Waiting is user-code only:
/// from a handler (which must never block) it stops the job with an error; use then() there.
template <class T>
class future {
 public:
  /// The type of the value (void: an event).
  using value_type = T;

  /// A future that is never ready (default-constructed; mostly a placeholder).
  future() : state_(detail::new_state<T>()) {}

  /// True once the value is there. Does not run the progress engine.
  [[nodiscard]] bool ready() const noexcept { return state_->ready(); }

  /// Runs the progress engine until ready (see the class comment). (`loc`: the caller's line,
  /// which a misuse, such as waiting in a handler, names.)
  void wait(source_location loc = source_location::current()) const {
    if (!ready()) {
      const detail::call_site here(loc);
      detail::wait_until(
          [](const void* s) { return static_cast<const detail::future_state<T>*>(s)->ready(); },
          state_.get(), "future::wait()");
    }
  }

  /// The value, waiting for it first (see wait()). A copy: the future keeps its own.
  auto get(source_location loc = source_location::current()) const {
    wait(loc);
    if constexpr (!std::is_void_v<T>) return *state_->value;
  }

  /// Runs f(value) (f() for future<void>) once the value is there, and returns a future of its
  /// result; when f itself returns a future, of that future's value. Runs at once if the value
  /// is already there; otherwise from the progress engine, in the PE's user context unless a
  /// handler completed the future (then in that handler's context). f must not block.
  template <class F>
  auto then(F&& f) const {
    using result = typename detail::continuation_result<T, F>::type;
    using out_future = typename detail::then_result<result>::type;
    using out_value = typename out_future::value_type;
    promise<out_value> p;
    out_future out = p.get_future();
    // The continuation lives in this state until it runs: it points at the state, not owns it.
    detail::future_state<T>* st = state_.get();
    state_->on_ready([st, p, g = std::forward<F>(f)]() mutable {
      if constexpr (detail::is_future<result>::value) {
        result inner = detail::call_with(g, *st);
        detail::future_state<out_value>* in = inner.state_.get();
        in->on_ready([in, p] { detail::forward_value(*in, p); });
      } else if constexpr (std::is_void_v<result>) {
        detail::call_with(g, *st);
        p.set_value();
      } else {
        p.set_value(detail::call_with(g, *st));
      }
    });
    return out;
  }

 private:
  template <class>
  friend class future;
  template <class>
  friend class promise;
  template <class U>
  friend void detail::notify(const future<U>& f, detail::callback fn);
  template <class U>
  friend future<U> detail::future_of(std::shared_ptr<detail::future_state<U>> state);
  explicit future(std::shared_ptr<detail::future_state<T>> s) : state_(std::move(s)) {}
  std::shared_ptr<detail::future_state<T>> state_;
};

template <class T>
void detail::notify(const future<T>& f, callback fn) {
  f.state_->on_ready(std::move(fn));
}
template <class T>
future<T> detail::future_of(std::shared_ptr<future_state<T>> state) {
  return future<T>(std::move(state));
}

/// A future whose value is already there.
template <class U>
[[nodiscard]] future<std::decay_t<U>> make_ready_future(U&& v) {
  promise<std::decay_t<U>> p;
  p.set_value(std::forward<U>(v));
  return p.get_future();
}
/// A future<void> that is already ready.
[[nodiscard]] inline future<void> make_ready_future() {
  promise<void> p;
  p.set_value();
  return p.get_future();
}

namespace detail {
template <class T>
auto value_tuple(const future<T>& f) {
  if constexpr (std::is_void_v<T>)
    return std::tuple<>();
  else
    return std::tuple<T>(f.get());
}
template <class... T>
using when_all_tuple = decltype(std::tuple_cat(value_tuple(std::declval<future<T>>())...));
}  // namespace detail

/// A future that is ready once all of `fs` are, holding their values in order (futures of void
/// contribute none): when_all(future<int>, future<void>, future<double>) is a
/// future<std::tuple<int, double>>. Waits on nothing itself: use get(), wait() or then().
template <class... T>
[[nodiscard]] future<detail::when_all_tuple<T...>> when_all(const future<T>&... fs) {
  using tuple = detail::when_all_tuple<T...>;
  promise<tuple> p;
  auto left = std::make_shared<std::size_t>(sizeof...(T));
  auto all = std::make_shared<std::tuple<future<T>...>>(fs...);
  if constexpr (sizeof...(T) == 0) {
    p.set_value(tuple());
  } else {
    const auto one_more = [p, left, all] {
      if (--*left == 0)
        p.set_value(std::apply(
            [](const auto&... f) { return std::tuple_cat(detail::value_tuple(f)...); }, *all));
    };
    (detail::notify(fs, one_more), ...);
  }
  return p.get_future();
}

/// A future of every value of `fs`, in order, once all are ready (of nothing, for futures of
/// void).
template <class T>
[[nodiscard]] auto when_all(const std::vector<future<T>>& fs) {
  using out = std::conditional_t<std::is_void_v<T>, void, std::vector<T>>;
  promise<out> p;
  // What the continuations share (one copy: a copy each would cost n^2), each holding one
  // reference. The futures themselves only for their values (of void: none kept).
  struct shared {
    promise<out> p;
    std::vector<future<T>> fs;
    std::size_t left;
    void finish() const {
      if constexpr (std::is_void_v<T>) {
        p.set_value();
      } else {
        std::vector<T> values;
        values.reserve(fs.size());
        for (const auto& f : fs) values.push_back(f.get());
        p.set_value(std::move(values));
      }
    }
  };
  future<out> result = p.get_future();
  if (fs.empty()) {
    shared{p, {}, 0}.finish();
    return result;
  }
  auto all = std::make_shared<shared>(shared{p, {}, fs.size()});
  if constexpr (!std::is_void_v<T>) all->fs = fs;
  for (const auto& f : fs)
    detail::notify(f, [all] {
      if (--all->left == 0) all->finish();
    });
  return result;
}

}  // namespace mailroom
