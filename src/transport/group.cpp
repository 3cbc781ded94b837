// SPDX-License-Identifier: MIT
// The program's collectives (the public API's): a communicator per group, the world's a duplicate
// of its own so that they never match mailroom's internal collectives (nor overlap the duplicates
// that collective.cpp starts on mailroom's communicator). MPI's built-in reductions where MPI
// knows the type and the operation; otherwise one user-defined MPI_Op that finds the combining
// function in an attribute of the element datatype, since MPI passes a user function no context.
#include "transport/transport.hpp"

#include "common/pe_local.hpp"
#include "transport/backend.hpp"
#include "transport/mpi_check.hpp"
#include "transport/mpi_request.hpp"
#include "transport/node_reduce.hpp"
#include "transport/sim.hpp"

#include <limits>

namespace mailroom::transport {

namespace {
using mailroom::detail::reduction;

using detail::as_int;
using detail::mpi_request;

std::unique_ptr<group> g_world;
MAILROOM_PE_LOCAL(g_world);
MPI_Op g_custom_op = MPI_OP_NULL;
int g_reduction_key = MPI_KEYVAL_INVALID;

// The user-defined operation: inout = in op inout, through the reduction attached to the type.
void apply_custom(void* in, void* inout, int* len, MPI_Datatype* type) {
  void* attr = nullptr;
  int found = 0;
  MPI_Type_get_attr(*type, g_reduction_key, &attr, &found);
  const auto* r = static_cast<const reduction*>(attr);
  if (found == 0 || r == nullptr) MAILROOM_FAIL("a custom reduction lost its operation");
  r->combine(in, inout, static_cast<std::size_t>(*len), r->ctx);
}

class mpi_group final : public group {
 public:
  // `control`: a duplicate for the termination protocols among the members (none for the
  // world's, whose protocols duplicate mailroom's communicator).
  mpi_group(MPI_Comm comm, std::vector<int> members, MPI_Comm control = MPI_COMM_NULL)
      : comm_(comm), control_(control) {
    MAILROOM_MPI(MPI_Comm_rank(comm_, &rank_));
    MAILROOM_MPI(MPI_Comm_size(comm_, &size_));
    members_ = std::move(members);
  }
  ~mpi_group() override {
    node_.reset();  // (first: it completes reductions still in flight)
    MPI_Comm_free(&comm_);
    if (control_ != MPI_COMM_NULL) MPI_Comm_free(&control_);
  }
  mpi_group(const mpi_group&) = delete;
  mpi_group& operator=(const mpi_group&) = delete;

  std::unique_ptr<group> split(int colour, int key) override {
    // MPI_Comm_split blocks and has no non-blocking form: a barrier that keeps mailroom moving
    // first, so that no member still waits on another in mailroom when one enters it.
    auto b = start_barrier();
    detail::wait_request(*b, "team split");
    MPI_Comm out = MPI_COMM_NULL;
    MAILROOM_MPI(MPI_Comm_split(comm_, colour < 0 ? MPI_UNDEFINED : colour, key, &out));
    if (out == MPI_COMM_NULL) return nullptr;
    int n = 0;
    MAILROOM_MPI(MPI_Comm_size(out, &n));
    std::vector<int> world(static_cast<std::size_t>(n));
    const int me = world_rank(rank_);
    MAILROOM_MPI(MPI_Allgather(&me, 1, MPI_INT, world.data(), 1, MPI_INT, out));
    MPI_Comm control = MPI_COMM_NULL;
    MAILROOM_MPI(MPI_Comm_dup(out, &control));
    auto g = std::make_unique<mpi_group>(out, std::move(world), control);
    g->reduce_within_node(node_bytes_);
    return g;
  }

  void reduce_within_node(std::size_t bytes) override {
    node_bytes_ = bytes;
    node_ = detail::node_reducer::make(comm_, bytes);
  }

  std::unique_ptr<collective_context::impl> make_context() override {
    // (The world group's selectors are the job's, whose contexts duplicate mailroom's
    // communicator: collective_context().)
    MAILROOM_CHECK(control_ != MPI_COMM_NULL, "a termination context over the world group");
    // Tags go round below the bound MPI guarantees (32767); contexts live as long as their
    // selectors, far fewer at once.
    const int tag = 1 + static_cast<int>(contexts_++ % 32000);
    return detail::make_tree_context(control_, tag);
  }

  std::unique_ptr<request> start_barrier() override {
    auto r = std::make_unique<mpi_request>();
    MAILROOM_MPI(MPI_Ibarrier(comm_, &r->req));
    return r;
  }
  std::unique_ptr<request> start_allreduce(const void* in, void* out, std::size_t count,
                                           const reduction& red) override {
    if (node_ != nullptr && node_->takes(count * red.elem_bytes))
      return node_->start(in, out, count, red);
    auto r = std::make_unique<mpi_request>();
    const auto [t, op] = r->reduce_with(red);
    MAILROOM_MPI(MPI_Iallreduce(in, out, as_int(count, "all_reduce"), t, op, comm_, &r->req));
    return r;
  }
  std::unique_ptr<request> start_exscan(const void* in, void* out, std::size_t count,
                                        const reduction& red) override {
    auto r = std::make_unique<mpi_request>();
    const auto [t, op] = r->reduce_with(red);
    MAILROOM_MPI(MPI_Iexscan(in, out, as_int(count, "exclusive_scan"), t, op, comm_, &r->req));
    return r;
  }
  std::unique_ptr<request> start_broadcast(void* data, std::size_t bytes, int root) override {
    auto r = std::make_unique<mpi_request>();
    MAILROOM_MPI(MPI_Ibcast(data, as_int(bytes, "broadcast"), MPI_BYTE, root, comm_, &r->req));
    return r;
  }
  std::unique_ptr<request> start_gather(const void* in, void* out, std::size_t bytes,
                                        int root) override {
    auto r = std::make_unique<mpi_request>();
    const int n = as_int(bytes, "gather");
    MAILROOM_MPI(MPI_Igather(in, n, MPI_BYTE, out, n, MPI_BYTE, root, comm_, &r->req));
    return r;
  }
  std::unique_ptr<request> start_allgather(const void* in, void* out, std::size_t bytes) override {
    auto r = std::make_unique<mpi_request>();
    const int n = as_int(bytes, "all_gather");
    MAILROOM_MPI(MPI_Iallgather(in, n, MPI_BYTE, out, n, MPI_BYTE, comm_, &r->req));
    return r;
  }
  std::unique_ptr<request> start_alltoall(const void* in, void* out, std::size_t bytes) override {
    auto r = std::make_unique<mpi_request>();
    const int n = as_int(bytes, "all_to_all");
    MAILROOM_MPI(MPI_Ialltoall(in, n, MPI_BYTE, out, n, MPI_BYTE, comm_, &r->req));
    return r;
  }
  std::unique_ptr<request> start_alltoallv(const void* send, const int* send_counts,
                                           const int* send_displs, void* recv,
                                           const int* recv_counts, const int* recv_displs,
                                           std::size_t elem_bytes) override {
    auto r = std::make_unique<mpi_request>();
    const MPI_Datatype t = r->bytes_type(elem_bytes);
    MAILROOM_MPI(MPI_Ialltoallv(send, send_counts, send_displs, t, recv, recv_counts, recv_displs,
                                t, comm_, &r->req));
    return r;
  }

 private:
  MPI_Comm comm_;
  MPI_Comm control_;
  std::size_t node_bytes_ = 0;
  std::unique_ptr<detail::node_reducer> node_;  // null: every all_reduce through MPI
  std::uint64_t contexts_ = 0;
};
}  // namespace

void test_all(std::span<request* const> reqs, std::vector<char>& done) {
  done.assign(reqs.size(), 0);
  if (sim::active()) {
    for (std::size_t i = 0; i < reqs.size(); ++i) done[i] = reqs[i]->test() ? 1 : 0;
    return;
  }
  // MPI_Testsome over the MPI requests' handles; the others (reductions within a node, which
  // test only memory) one by one, in order.
  thread_local std::vector<MPI_Request> handles;
  thread_local std::vector<int> indices;
  thread_local std::vector<std::size_t> of;
  handles.clear();
  of.clear();
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    if (reqs[i]->mpi()) {
      handles.push_back(static_cast<mpi_request*>(reqs[i])->req);
      of.push_back(i);
    } else {
      done[i] = reqs[i]->test() ? 1 : 0;
    }
  }
  if (handles.empty()) return;
  indices.resize(handles.size());
  int n = 0;
  MAILROOM_MPI(MPI_Testsome(static_cast<int>(handles.size()), handles.data(), &n, indices.data(),
                            MPI_STATUSES_IGNORE));
  for (std::size_t k = 0; k < of.size(); ++k) {
    auto* r = static_cast<mpi_request*>(reqs[of[k]]);
    r->req = handles[k];  // MPI_REQUEST_NULL once complete
    if (r->req == MPI_REQUEST_NULL) done[of[k]] = r->test() ? 1 : 0;  // (frees its datatype)
  }
}

group& group::world() {
  MAILROOM_CHECK(g_world != nullptr,
                 "a collective called before mailroom::runtime exists "
                 "(construct `mailroom::runtime rt(argc, argv);` first)");
  return *g_world;
}

namespace detail {
MPI_Op custom_op() { return g_custom_op; }
int reduction_key() { return g_reduction_key; }

void start_groups() {
  if (sim::active()) {
    g_world = sim::make_world_group();
    return;
  }
  if (g_custom_op == MPI_OP_NULL) {
    MAILROOM_MPI(MPI_Op_create(&apply_custom, 0, &g_custom_op));
    MAILROOM_MPI(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN,
                                        &g_reduction_key, nullptr));
  }
  MPI_Comm dup = MPI_COMM_NULL;
  MAILROOM_MPI(MPI_Comm_dup(comm(), &dup));
  g_world = std::make_unique<mpi_group>(dup, std::vector<int>());
}

void stop_groups() {
  g_world.reset();
  if (sim::active() || g_custom_op == MPI_OP_NULL) return;
  MPI_Op_free(&g_custom_op);
  MPI_Type_free_keyval(&g_reduction_key);
}
}  // namespace detail

}  // namespace mailroom::transport
