// SPDX-License-Identifier: MIT
// mailroom: fine-grained asynchronous actor messages to partitioned global mailboxes, aggregated,
// delivered and terminated by the runtime. Include this one header.
#pragma once

#include "mailroom/actor.hpp"
#include "mailroom/collectives.hpp"
#include "mailroom/config.hpp"
#include "mailroom/conveyor.hpp"
#include "mailroom/distributed.hpp"
#include "mailroom/distribution.hpp"
#include "mailroom/error.hpp"
#include "mailroom/future.hpp"
#include "mailroom/gather.hpp"
#include "mailroom/global_array.hpp"
#include "mailroom/join.hpp"
#include "mailroom/pe.hpp"
#include "mailroom/runtime.hpp"
#include "mailroom/selector.hpp"
#include "mailroom/simulate.hpp"
#include "mailroom/symmetric.hpp"
#include "mailroom/team.hpp"
#include "mailroom/termination.hpp"
#include "mailroom/version.hpp"

// Not here: sparse_matrix.hpp, generators.hpp and matrix_market.hpp belong to the library
// mailroom::matrix (libmailroom_matrix), built on this API; include them and link it to use them.

/// \namespace mailroom
/// The public API: runtime, actors and selectors, futures and tasks, symmetric memory,
/// collectives and teams; and, in the library mailroom::matrix built on them, sparse matrices,
/// their generators and Matrix Market files. Names in mailroom::detail are not API.
/// \namespace mailroom::matrix_market
/// Matrix Market files: parse and format text serially, read and write distributed matrices.
/// \namespace mailroom::termination
/// The termination layer's analysis of a dependency graph and its quiescence detection.
