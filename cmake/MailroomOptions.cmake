# SPDX-License-Identifier: MIT
# Warnings, sanitizers and the internal-assert switch shared by every mailroom target.
add_library(mailroom_options INTERFACE)
target_compile_options(mailroom_options INTERFACE -Wall -Wextra -Wpedantic -Wshadow)
# Error messages name the source file relative to the project (src/matrix/matrix_market.cpp:438),
# not by the path of the machine that built it.
target_compile_options(mailroom_options INTERFACE -fmacro-prefix-map=${PROJECT_SOURCE_DIR}/=)
if(MAILROOM_SANITIZE)
  target_compile_options(mailroom_options INTERFACE -fsanitize=${MAILROOM_SANITIZE} -fno-omit-frame-pointer)
  target_link_options(mailroom_options INTERFACE -fsanitize=${MAILROOM_SANITIZE})
  # Undefined behaviour stops the program (and fails its test) instead of printing and going on.
  if(MAILROOM_SANITIZE MATCHES "undefined")
    target_compile_options(mailroom_options INTERFACE -fno-sanitize-recover=undefined)
  endif()
endif()
# Internal invariants (MAILROOM_ASSERT) are on in Debug and sanitizer builds.
if(MAILROOM_SANITIZE OR CMAKE_BUILD_TYPE STREQUAL "Debug")
  target_compile_definitions(mailroom_options INTERFACE MAILROOM_ENABLE_ASSERTS=1)
endif()
