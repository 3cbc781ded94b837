// SPDX-License-Identifier: MIT
// The symmetric heap's non-blocking transfers through the transport, for the pgas layer (which
// turns them into futures). Not installed.
#pragma once

#include "mailroom/detail/reduction.hpp"
#include "transport/transport.hpp"

#include <memory>

namespace mailroom::detail {

std::unique_ptr<transport::request> symmetric_start_get(int pe, const void* p, void* out,
                                                        std::size_t bytes);
std::unique_ptr<transport::request> symmetric_start_put(int pe, void* p, const void* in,
                                                        std::size_t bytes);
std::unique_ptr<transport::request> symmetric_start_atomic(int pe, void* p, elem_type type,
                                                           atomic_op op, std::uint64_t operand,
                                                           std::uint64_t compare,
                                                           std::uint64_t* result);

}  // namespace mailroom::detail
