// SPDX-License-Identifier: MIT
// Error reporting shared by every layer: MAILROOM_CHECK for misuse (always on), MAILROOM_ASSERT
// for internal invariants (debug and sanitizer builds). A failure names rank, file, line and the
// call, then brings the whole job down: never a silent hang.
#pragma once

#include <fmt/format.h>

#include <string_view>
#include <version>
#if defined(__cpp_lib_source_location)
#include <source_location>
#endif

namespace mailroom {

#if defined(__cpp_lib_source_location)
/// Where a call was made: the defaulted last argument of the API's entry points, which errors
/// name (`source_location::current()`).
using source_location = std::source_location;
#else
/// std::source_location where the standard library has none (libstdc++ under clang 14, which
/// lacks the builtin it needs): the same interface, from __builtin_FILE and __builtin_LINE.
class source_location {
 public:
  /// The caller's file and line, when used as a defaulted argument.
  static constexpr source_location current(const char* file = __builtin_FILE(),
                                           unsigned line = __builtin_LINE()) noexcept {
    source_location l;
    l.file_ = file;
    l.line_ = line;
    return l;
  }
  constexpr source_location() noexcept = default;
  /// The file of the call, as the compiler spelt it ("" when default-constructed).
  [[nodiscard]] constexpr const char* file_name() const noexcept { return file_; }
  /// The line of the call, from 1 (0 when default-constructed).
  [[nodiscard]] constexpr unsigned line() const noexcept { return line_; }
  /// The column: unknown here (0), as std::source_location allows.
  [[nodiscard]] constexpr unsigned column() const noexcept { return 0; }

 private:
  const char* file_ = "";
  unsigned line_ = 0;
};
#endif

}  // namespace mailroom

namespace mailroom::detail {

/// Where the program called into mailroom, for the duration of a call that may fail because of
/// its caller (the API's entry points open one): a failure names the caller's file and line
/// first. Per thread; calls nest (a wait runs handlers, which send).
class call_site {
 public:
  explicit call_site(const source_location& where) noexcept;
  ~call_site();
  call_site(const call_site&) = delete;
  call_site& operator=(const call_site&) = delete;
  /// The innermost call in progress on this thread, or null.
  [[nodiscard]] static const source_location* current() noexcept;

 private:
  const source_location* previous_;
};

/// Prints "mailroom: rank R: file:line: what" to stderr and aborts the whole job (MPI_Abort once
/// MPI is up, exit(1) before). Never returns. Within a call_site, the file and line are the
/// caller's, and mailroom's own follow in brackets.
[[noreturn]] void fail(const char* file, int line, std::string_view what) noexcept;

/// The rank printed in error messages: -1 until the transport is initialised.
int error_rank() noexcept;

template <class... Args>
[[noreturn]] void fail_fmt(const char* file, int line, fmt::format_string<Args...> f,
                           Args&&... args) noexcept {
  fail(file, line, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace mailroom::detail

#define MAILROOM_LIKELY(...) __builtin_expect(!!(__VA_ARGS__), 1)
#define MAILROOM_UNLIKELY(...) __builtin_expect(!!(__VA_ARGS__), 0)

/// Checks a condition that the user can violate; always compiled in.
#define MAILROOM_CHECK(cond, ...)                                                                  \
  do {                                                                                             \
    if (MAILROOM_UNLIKELY(!(cond))) ::mailroom::detail::fail_fmt(__FILE__, __LINE__, __VA_ARGS__); \
  } while (0)

/// Unconditional failure with a message.
#define MAILROOM_FAIL(...) ::mailroom::detail::fail_fmt(__FILE__, __LINE__, __VA_ARGS__)

#if defined(MAILROOM_ENABLE_ASSERTS)
#define MAILROOM_ASSERT(cond)                                                            \
  do {                                                                                   \
    if (MAILROOM_UNLIKELY(!(cond)))                                                      \
      ::mailroom::detail::fail(__FILE__, __LINE__, "internal invariant broken: " #cond); \
  } while (0)
#else
#define MAILROOM_ASSERT(cond) ((void)0)
#endif
