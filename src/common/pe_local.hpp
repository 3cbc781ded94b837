// SPDX-License-Identifier: MIT
// State of one PE that lives in globals. With the simulated machine (transport/sim.cpp) many PEs
// share one process: each global that belongs to a PE is registered here, and the simulator
// swaps every PE's values in when it switches to that PE and parks them when it switches away.
// Under MPI (one PE per process) nothing is swapped: registration is all it costs. Not installed.
#pragma once

#include <type_traits>
#include <utility>
#include <vector>

namespace mailroom::detail {

class pe_locals {
 public:
  struct entry {
    void* var;
    void* (*make)(const void* initial);  // a parked copy holding the initial value
    void (*destroy)(void* parked) noexcept;
    void (*swap)(void* a, void* b) noexcept;
    void* initial;  // a copy of the value at registration (static initialisation), or null
  };

  /// Registers `var` (at static initialisation, after var's own initialisation in its file).
  template <class T>
  static bool add(T& var) {
    void* initial = nullptr;
    if constexpr (std::is_copy_constructible_v<T>) initial = new T(var);
    registry().list.push_back({&var,
                               [](const void* init) -> void* {
                                 if constexpr (std::is_copy_constructible_v<T>) {
                                   if (init != nullptr) return new T(*static_cast<const T*>(init));
                                 }
                                 return new T();
                               },
                               [](void* p) noexcept { delete static_cast<T*>(p); },
                               [](void* a, void* b) noexcept {
                                 using std::swap;
                                 swap(*static_cast<T*>(a), *static_cast<T*>(b));
                               },
                               initial});
    return true;
  }
  /// Called after every switch to a PE, once its values are in (e.g. to map its memory).
  static bool on_switch_in(void (*hook)());

  /// One PE's parked values: the initial ones to begin with.
  static std::vector<void*> make_parked();
  static void destroy_parked(std::vector<void*>& parked) noexcept;
  /// Exchanges the globals with `parked` (switching in, then out again, is the identity).
  static void swap(std::vector<void*>& parked) noexcept;
  static void run_switch_hooks();

 private:
  struct entries_t {
    std::vector<entry> list;
    std::vector<void (*)()> hooks;
    entries_t() = default;
    entries_t(const entries_t&) = delete;
    entries_t& operator=(const entries_t&) = delete;
    ~entries_t();  // frees the initial copies
  };
  static entries_t& registry();
};

}  // namespace mailroom::detail

#define MAILROOM_PE_LOCAL_CAT2(a, b) a##b
#define MAILROOM_PE_LOCAL_CAT(a, b) MAILROOM_PE_LOCAL_CAT2(a, b)
/// Marks a global (defined above, in the same file) as one PE's state.
#define MAILROOM_PE_LOCAL(var)                                                             \
  [[maybe_unused]] static const bool MAILROOM_PE_LOCAL_CAT(mailroom_pe_local_, __LINE__) = \
      ::mailroom::detail::pe_locals::add(var)
