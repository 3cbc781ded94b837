// SPDX-License-Identifier: MIT
// MPI_Gatherv and MPI_Scatterv, which the public collectives do not offer, as the MPI_Alltoallv
// form of all_to_all_v in which only the root's side has non-zero counts. What moves a whole
// matrix between one PE and all (sparse_matrix::gather and scatter). Not installed.
#pragma once

#include "mailroom/collectives.hpp"
#include "mailroom/runtime.hpp"

#include <cstddef>
#include <span>
#include <vector>

namespace mailroom::matrix_detail {

/// Collective: this PE's `send` lands on `root` at recv[displs[p]] for each PE p, counts[p]
/// elements (counts and displs are read on root only: other PEs may pass empty spans, and their
/// `recv` is not touched). Every PE passes num_pes() counts to the all-to-all, zero but for the
/// one PE they exchange with: O(P) per PE, as MPI_Gatherv's root needs anyway.
template <class T>
void gather_v(std::span<const T> send, std::span<T> recv, std::span<const int> counts,
              std::span<const int> displs, int root) {
  const int me = this_pe().rank();
  const auto n = static_cast<std::size_t>(num_pes());
  const auto r = static_cast<std::size_t>(root);
  std::vector<int> send_counts(n, 0), send_displs(n, 0), recv_counts(n, 0), recv_displs(n, 0);
  send_counts[r] = static_cast<int>(send.size());
  if (me == root) {
    recv_counts.assign(counts.begin(), counts.end());
    recv_displs.assign(displs.begin(), displs.end());
  }
  all_to_all_v(send, std::span<const int>(send_counts), std::span<const int>(send_displs), recv,
               std::span<const int>(recv_counts), std::span<const int>(recv_displs));
}

/// Collective: the inverse of gather_v: counts[p] elements of root's `send` from displs[p] go to
/// PE p, whose `recv` holds exactly that many (counts and displs are read on root only).
template <class T>
void scatter_v(std::span<const T> send, std::span<const int> counts, std::span<const int> displs,
               std::span<T> recv, int root) {
  const int me = this_pe().rank();
  const auto n = static_cast<std::size_t>(num_pes());
  std::vector<int> send_counts(n, 0), send_displs(n, 0), recv_counts(n, 0), recv_displs(n, 0);
  if (me == root) {
    send_counts.assign(counts.begin(), counts.end());
    send_displs.assign(displs.begin(), displs.end());
  }
  recv_counts[static_cast<std::size_t>(root)] = static_cast<int>(recv.size());
  all_to_all_v(send, std::span<const int>(send_counts), std::span<const int>(send_displs), recv,
               std::span<const int>(recv_counts), std::span<const int>(recv_displs));
}

}  // namespace mailroom::matrix_detail
