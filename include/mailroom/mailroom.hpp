// SPDX-License-Identifier: MIT
// mailroom: fine-grained asynchronous actor messages to partitioned global mailboxes, aggregated,
// delivered and terminated by the runtime. Include this one header.
#pragma once

#include "mailroom/actor.hpp"
#include "mailroom/collectives.hpp"
#include "mailroom/config.hpp"
#include "mailroom/conveyor.hpp"
#include "mailroom/error.hpp"
#include "mailroom/future.hpp"
#include "mailroom/gather.hpp"
#include "mailroom/join.hpp"
#include "mailroom/generators.hpp"
#include "mailroom/matrix_market.hpp"
#include "mailroom/pe.hpp"
#include "mailroom/runtime.hpp"
#include "mailroom/selector.hpp"
#include "mailroom/simulate.hpp"
#include "mailroom/sparse_matrix.hpp"
#include "mailroom/symmetric.hpp"
#include "mailroom/team.hpp"
#include "mailroom/termination.hpp"

/// \namespace mailroom
/// The public API: runtime, actors and selectors, futures and tasks, symmetric memory,
/// collectives and teams, and the sparse-matrix library built on them. Names in
/// mailroom::detail are not API.
/// \namespace mailroom::matrix_market
/// Matrix Market files: parse and format text serially, read and write distributed matrices.
/// \namespace mailroom::termination
/// The termination layer's analysis of a dependency graph and its quiescence detection.
