// SPDX-License-Identifier: MIT
// The Permutation mini-app for the driver: data and perm, two random permutations of [0, N x P)
// made distributed (mailroom::random_permutation), and the exact checker: the expected data_perm,
// computed by all-to-alls before timing, compared with the output element by element.
#include "common/checksum.hpp"
#include "common/driver.hpp"
#include "permutation/permutation.hpp"

#include <mailroom/generators.hpp>

#include <algorithm>
#include <span>

namespace mailroom::apps {

namespace {

// Collective: on the owner of each key[l], out[d.local(key[l])] = value[l], by one all-to-all
// (slots no key names hold -1).
std::vector<std::int64_t> placed(const cyclic& d, std::span<const std::int64_t> key,
                                 std::span<const std::int64_t> value) {
  struct pair {
    std::int64_t key, value;
  };
  std::vector<pair> pairs(key.size());
  for (std::size_t l = 0; l < key.size(); ++l) pairs[l] = {key[l], value[l]};
  std::vector<std::int64_t> out(local_size(d, this_pe()), -1);
  for (const pair& p : to_owners(std::span<const pair>(pairs),
                                 [&d](const pair& q) { return d.owner(q.key).rank(); }))
    out[d.local(p.key)] = p.value;
  return out;
}

class permutation_bench final : public kernel_bench {
 public:
  void prepare(const sizes& s) override {
    const pe me = this_pe();
    const cyclic d(s.n * num_pes());
    pb_.data = random_permutation(d.size(), s.seed + 1);
    pb_.perm = distributed<std::int64_t>(d);
    std::ranges::copy(random_permutation(d.size(), s.seed + 2), pb_.perm.local().begin());
    data_perm_ = distributed<std::int64_t>(d);
    // The expected data_perm: data's inverse at the owners of its values (inverse[k] = i where
    // data[i] = k), then sent on to where perm takes them.
    std::vector<std::int64_t> mine(pb_.data.size());
    for (std::size_t l = 0; l < mine.size(); ++l) mine[l] = d.global(me, l);
    const auto perm = pb_.perm.local();
    want_ = placed(d, perm, placed(d, pb_.data, mine));
    // local's: this PE's own two rounds, the last write to a slot kept.
    own_.assign(mine.size(), -1);
    for (std::size_t l = 0; l < mine.size(); ++l)
      own_[d.local(perm[d.local(pb_.data[l])])] = mine[l];
  }
  void reset() override { std::ranges::fill(data_perm_.local(), -1); }
  void run(std::string_view v) override {
    if (v == "naive")
      permutation::naive(pb_, data_perm_);
    else if (v == "conveyor")
      permutation::conveyor(pb_, data_perm_);
    else if (v == "selector")
      permutation::selector(pb_, data_perm_);
    else if (v == "lambda")
      permutation::lambda(pb_, data_perm_);
    else if (v == "local")
      permutation::local(pb_, data_perm_);
  }
  // Every element, against the expectation computed without the runtime's messages.
  bool check(std::string_view v) override {
    const auto& want = v == "local" ? own_ : want_;
    const auto got = data_perm_.local();
    std::int64_t wrong = 0;
    for (std::size_t l = 0; l < want.size(); ++l) wrong += got[l] != want[l];
    return all_reduce(wrong) == 0;
  }
  // A checksum of data_perm, each value at its global index.
  [[nodiscard]] std::string result() const override {
    const auto got = data_perm_.local();
    std::uint64_t h = 0;
    for (std::size_t l = 0; l < got.size(); ++l)
      h += element_hash(data_perm_.dist().global(this_pe(), l), got[l]);
    return "checksum " + checksum_text(h);
  }
  ~permutation_bench() override {
    // Symmetric blocks are reclaimed in reverse order of allocation.
    if (data_perm_.parts().data() != nullptr) symmetric_free(data_perm_);
    if (pb_.perm.parts().data() != nullptr) symmetric_free(pb_.perm);
  }

 private:
  permutation::problem pb_;
  distributed<std::int64_t> data_perm_;
  std::vector<std::int64_t> want_, own_;
};

}  // namespace

app_info permutation_app() {
  app_info app{"permutation",
               "Active Pebbles' Permutation: data_perm[perm[data[i]]] = i for arrays of N "
               "elements per PE (cyclic), data and perm random permutations; per element a "
               "request and its reply, then a store",
               "element",
               1 << 22,
               0,
               1 << 12,
               0,
               {"naive", "conveyor", "selector", "lambda", "local"},
               [] { return std::make_unique<permutation_bench>(); }};
  app.n_means = "elements N (one operation each)";
  app.local_floor =
      "the same two rounds over this PE's own parts, global index k at local index k / P here "
      "(data_perm[perm[data[l] / P] / P] = i, the last write to a slot kept): no communication";
  return app;
}

}  // namespace mailroom::apps
