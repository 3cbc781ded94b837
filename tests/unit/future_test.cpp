// SPDX-License-Identifier: MIT
// Futures without a runtime: promises, then() chains in order, when_all, and the callback that
// holds continuations (small captures inside it, large ones on the heap, moves and destruction
// each exactly once). Nothing here waits: waiting needs the progress engine (tests/mpi).
#include <mailroom/future.hpp>

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace {

using mailroom::future;
using mailroom::promise;
using mailroom::detail::callback;

TEST(Callback, RunsSmallAndLargeCapturesAndDestroysEachOnce) {
  auto counted = std::make_shared<int>(0);
  int runs = 0;
  {
    callback small([counted, &runs] { ++runs; });  // 24 bytes: inside
    std::array<char, 200> big{};
    big[199] = 'x';
    callback large([counted, big, &runs] { runs += big[199] == 'x' ? 10 : 0; });  // heap
    EXPECT_EQ(counted.use_count(), 3);
    small();
    large();
    callback moved = std::move(large);
    EXPECT_FALSE(static_cast<bool>(large));  // NOLINT(bugprone-use-after-move): what it checks
    moved();
    callback assigned;
    assigned = std::move(small);
    assigned();
    EXPECT_EQ(counted.use_count(), 3);  // moves copy nothing
  }
  EXPECT_EQ(runs, 1 + 10 + 10 + 1);
  EXPECT_EQ(counted.use_count(), 1);  // each capture destroyed once
}

TEST(Callback, ResetDestroysTheCapture) {
  auto counted = std::make_shared<int>(0);
  callback c([counted] {});
  EXPECT_EQ(counted.use_count(), 2);
  c.reset();
  EXPECT_FALSE(static_cast<bool>(c));
  EXPECT_EQ(counted.use_count(), 1);
}

TEST(Future, ContinuationsRunInTheOrderGivenOnceTheValueIsSet) {
  promise<int> p;
  future<int> f = p.get_future();
  std::vector<std::string> log;
  for (int i = 0; i < 5; ++i)
    (void)f.then([&log, i](int v) { log.push_back(std::to_string(i) + ":" + std::to_string(v)); });
  EXPECT_TRUE(log.empty());
  EXPECT_FALSE(f.ready());
  p.set_value(7);
  EXPECT_TRUE(f.ready());
  EXPECT_EQ(log, (std::vector<std::string>{"0:7", "1:7", "2:7", "3:7", "4:7"}));
  // On a ready future, at once.
  (void)f.then([&log](int v) { log.push_back("late:" + std::to_string(v)); });
  EXPECT_EQ(log.back(), "late:7");
}

TEST(Future, ThenChainsAndUnwrapsFutures) {
  promise<int> p;
  promise<std::string> inner;
  future<std::size_t> f = p.get_future()
                              .then([](int v) { return v * 2; })
                              .then([inner](int) { return inner.get_future(); })
                              .then([](const std::string& s) { return s.size(); });
  p.set_value(21);
  EXPECT_FALSE(f.ready());
  inner.set_value("forty-two");
  ASSERT_TRUE(f.ready());
  EXPECT_EQ(f.get(), 9u);
}

TEST(Future, WhenAllOfAVectorIsReadyWithTheLastAndKeepsTheOrder) {
  std::vector<promise<int>> ps(4);
  std::vector<future<int>> fs;
  for (auto& p : ps) fs.push_back(p.get_future());
  auto all = mailroom::when_all(fs);
  for (int i : {2, 0, 3}) ps[static_cast<std::size_t>(i)].set_value(i * 10);
  EXPECT_FALSE(all.ready());
  ps[1].set_value(10);
  ASSERT_TRUE(all.ready());
  EXPECT_EQ(all.get(), (std::vector<int>{0, 10, 20, 30}));
}

TEST(Future, WhenAllOfVoidsAndOfNothing) {
  std::vector<promise<void>> ps(3);
  std::vector<future<void>> fs;
  for (auto& p : ps) fs.push_back(p.get_future());
  auto all = mailroom::when_all(fs);
  ps[0].set_value();
  ps[2].set_value();
  EXPECT_FALSE(all.ready());
  ps[1].set_value();
  EXPECT_TRUE(all.ready());
  EXPECT_TRUE(mailroom::when_all(std::vector<future<void>>{}).ready());
  EXPECT_TRUE(mailroom::when_all(std::vector<future<int>>{}).ready());
}

TEST(Future, WhenAllOfMixedTypesGivesATupleOfTheValues) {
  promise<int> a;
  promise<void> b;
  promise<double> c;
  auto all = mailroom::when_all(a.get_future(), b.get_future(), c.get_future());
  c.set_value(1.5);
  a.set_value(3);
  EXPECT_FALSE(all.ready());
  b.set_value();
  ASSERT_TRUE(all.ready());
  EXPECT_EQ(all.get(), std::make_tuple(3, 1.5));
}

// A value type aligned beyond what operator new gives: its state must still be aligned.
struct alignas(64) wide {
  double v[8];
};

TEST(Future, OverAlignedValuesAreStoredAligned) {
  std::vector<promise<wide>> ps(16);
  int misaligned = 0;
  std::vector<future<void>> seen;
  for (auto& p : ps)
    seen.push_back(p.get_future().then([&misaligned](const wide& w) {
      misaligned += reinterpret_cast<std::uintptr_t>(&w) % alignof(wide) != 0;
    }));
  for (auto& p : ps) p.set_value(wide{});
  EXPECT_EQ(misaligned, 0);
}

}  // namespace
