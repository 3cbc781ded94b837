// SPDX-License-Identifier: MIT
// The MPI side of a transport::request, shared by the collectives and the one-sided windows so
// that transport::test_all can test them all in one MPI_Testsome. Private to the transport.
#pragma once

#include "transport/mpi_check.hpp"
#include "transport/transport.hpp"

#include <limits>
#include <utility>

namespace mailroom::transport::detail {

using mailroom::detail::elem_type;
using mailroom::detail::reduce_kind;
using mailroom::detail::reduction;

/// MPI's datatype for an element type (MPI_DATATYPE_NULL for bytes).
MPI_Datatype builtin_type(elem_type t);
/// MPI's operation for a reduction kind (MPI_OP_NULL for custom).
MPI_Op builtin_op(reduce_kind k);
/// The user-defined operation that applies a reduction attached to its datatype, and the
/// attribute key it is attached with (group.cpp).
MPI_Op custom_op();
int reduction_key();

inline int as_int(std::size_t n, const char* what) {
  MAILROOM_CHECK(n <= static_cast<std::size_t>(std::numeric_limits<int>::max()),
                 "{} of {} elements: MPI counts are ints; split it", what, n);
  return static_cast<int>(n);
}

inline MPI_Datatype builtin_type(elem_type t) {
  switch (t) {
    case elem_type::i8:
      return MPI_INT8_T;
    case elem_type::i16:
      return MPI_INT16_T;
    case elem_type::i32:
      return MPI_INT32_T;
    case elem_type::i64:
      return MPI_INT64_T;
    case elem_type::u8:
      return MPI_UINT8_T;
    case elem_type::u16:
      return MPI_UINT16_T;
    case elem_type::u32:
      return MPI_UINT32_T;
    case elem_type::u64:
      return MPI_UINT64_T;
    case elem_type::f32:
      return MPI_FLOAT;
    case elem_type::f64:
      return MPI_DOUBLE;
    case elem_type::bytes:
      break;
  }
  return MPI_DATATYPE_NULL;
}

inline MPI_Op builtin_op(reduce_kind k) {
  switch (k) {
    case reduce_kind::sum:
      return MPI_SUM;
    case reduce_kind::prod:
      return MPI_PROD;
    case reduce_kind::min:
      return MPI_MIN;
    case reduce_kind::max:
      return MPI_MAX;
    case reduce_kind::band:
      return MPI_BAND;
    case reduce_kind::bor:
      return MPI_BOR;
    case reduce_kind::bxor:
      return MPI_BXOR;
    case reduce_kind::custom:
      break;
  }
  return MPI_OP_NULL;
}

class mpi_request final : public request {
 public:
  mpi_request() = default;
  ~mpi_request() override {
    if (req != MPI_REQUEST_NULL) MPI_Wait(&req, MPI_STATUS_IGNORE);
    release();
  }
  mpi_request(const mpi_request&) = delete;
  mpi_request& operator=(const mpi_request&) = delete;
  [[nodiscard]] bool mpi() const noexcept override { return true; }
  bool test() override {
    if (req == MPI_REQUEST_NULL) return true;
    int flag = 0;
    MAILROOM_MPI(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
    if (flag == 0) return false;
    release();
    return true;
  }
  // The element type and operation of a reduction: MPI's own, or bytes carrying `r`.
  std::pair<MPI_Datatype, MPI_Op> reduce_with(const reduction& r) {
    if (r.builtin()) return {builtin_type(r.type), builtin_op(r.kind)};
    red = r;
    MAILROOM_MPI(MPI_Type_contiguous(as_int(r.elem_bytes, "a reduction element"), MPI_BYTE, &type));
    MAILROOM_MPI(MPI_Type_commit(&type));
    MAILROOM_MPI(MPI_Type_set_attr(type, reduction_key(), &red));
    return {type, custom_op()};
  }
  MPI_Datatype bytes_type(std::size_t elem_bytes) {
    MAILROOM_MPI(MPI_Type_contiguous(as_int(elem_bytes, "an element"), MPI_BYTE, &type));
    MAILROOM_MPI(MPI_Type_commit(&type));
    return type;
  }
  MPI_Request req = MPI_REQUEST_NULL;
  std::uint64_t operand = 0;  // an atomic's origin value, kept until it completes

 private:
  void release() {
    if (type != MPI_DATATYPE_NULL) MPI_Type_free(&type);
  }
  MPI_Datatype type = MPI_DATATYPE_NULL;
  reduction red;
};

}  // namespace mailroom::transport::detail
