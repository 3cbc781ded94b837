// SPDX-License-Identifier: MIT
// mailroom's version, for code that must tell releases apart (`#if MAILROOM_VERSION >= ...`). The
// one place the version is written: CMake's project() reads it from here. Semantic versions: a
// public API that changes keeps its old form for one minor version, marked
// [[deprecated("use ...")]] (CHANGELOG.md lists each change).
#pragma once

#define MAILROOM_VERSION_MAJOR 0
#define MAILROOM_VERSION_MINOR 2
#define MAILROOM_VERSION_PATCH 0
/// "0.2.0"
#define MAILROOM_VERSION_STRING "0.2.0"
/// One number that grows with each release: major * 10000 + minor * 100 + patch.
#define MAILROOM_VERSION \
  (MAILROOM_VERSION_MAJOR * 10000 + MAILROOM_VERSION_MINOR * 100 + MAILROOM_VERSION_PATCH)
