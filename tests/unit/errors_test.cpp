// SPDX-License-Identifier: MIT
// The fatal-error path in one process (no MPI job): MAILROOM_CHECK and MAILROOM_FAIL print what
// went wrong and exit with status 1, and every mailroom object or call that needs the runtime
// says so when it is used before the runtime exists.
#include <mailroom/mailroom.hpp>

#include <gtest/gtest.h>

namespace {

namespace mr = mailroom;

TEST(Errors, RankIsUnknownBeforeTheRuntime) { EXPECT_EQ(mr::detail::error_rank(), -1); }

TEST(Errors, CheckThatHoldsEvaluatesItsConditionOnce) {
  int evaluated = 0;
  MAILROOM_CHECK(++evaluated == 1, "never printed");
  EXPECT_EQ(evaluated, 1);
}

TEST(ErrorsDeathTest, CheckPrintsFileLineAndMessageThenExits) {
  EXPECT_EXIT(MAILROOM_CHECK(1 + 1 == 3, "arithmetic broke: {} != {}", 2, 3),
              testing::ExitedWithCode(1),
              "mailroom: .*errors_test\\.cpp:[0-9]+: arithmetic broke: 2 != 3");
}

TEST(ErrorsDeathTest, FailAlwaysExits) {
  EXPECT_EXIT(MAILROOM_FAIL("gave up after {} tries", 7), testing::ExitedWithCode(1),
              "gave up after 7 tries");
}

// Misuse before `mailroom::runtime rt(argc, argv);` must be a clear message, not a crash.
TEST(ErrorsDeathTest, LambdaActorBeforeTheRuntime) {
  EXPECT_EXIT({ mr::actor<> a; }, testing::ExitedWithCode(1),
              "mailroom::selector called before mailroom::runtime exists");
}

TEST(ErrorsDeathTest, TypedActorBeforeTheRuntime) {
  EXPECT_EXIT({ mr::actor<int> a([](int) {}); }, testing::ExitedWithCode(1),
              "before mailroom::runtime exists");
}

TEST(ErrorsDeathTest, SelectorBeforeTheRuntime) {
  const auto construct = [] { mr::selector s{mr::mailbox<int>([](int) {}), mr::lambdas{}}; };
  EXPECT_EXIT(construct(), testing::ExitedWithCode(1),
              "mailroom::selector called before mailroom::runtime exists");
}

TEST(ErrorsDeathTest, ConveyorBeforeTheRuntime) {
  EXPECT_EXIT({ mr::conveyor<int> c; }, testing::ExitedWithCode(1),
              "a conveyor or mailbox was created before mailroom::runtime exists");
}

TEST(ErrorsDeathTest, SymmetricArrayBeforeTheRuntime) {
  EXPECT_EXIT({ mr::symmetric_array<int> a(10); }, testing::ExitedWithCode(1),
              "symmetric_array created before mailroom::runtime exists");
}

TEST(ErrorsDeathTest, QueriesBeforeTheRuntime) {
  EXPECT_EXIT((void)mr::num_pes(), testing::ExitedWithCode(1),
              "mailroom::num_pes\\(\\) called before mailroom::runtime exists");
  EXPECT_EXIT((void)mr::this_pe(), testing::ExitedWithCode(1),
              "mailroom::this_pe\\(\\) called before mailroom::runtime exists");
  EXPECT_EXIT((void)mr::wtime(), testing::ExitedWithCode(1),
              "mailroom::wtime\\(\\) called before mailroom::runtime exists");
  EXPECT_EXIT((void)mr::num_nodes(), testing::ExitedWithCode(1),
              "mailroom::num_nodes\\(\\) called before mailroom::runtime exists");
}

// A misuse names the caller's file and line first, mailroom's own in brackets after.
TEST(ErrorsDeathTest, ACallSiteNamesTheCallersLine) {
  const auto misuse = [] {
    const mailroom::detail::call_site here(mr::source_location::current());
    MAILROOM_FAIL("the caller's fault");
  };
  EXPECT_EXIT(misuse(), testing::ExitedWithCode(1),
              "errors_test\\.cpp:[0-9]+: the caller's fault \\[[^]]*errors_test\\.cpp:[0-9]+\\]");
}

TEST(ErrorsDeathTest, SchedulerCallsBeforeTheRuntime) {
  EXPECT_EXIT(mr::yield(), testing::ExitedWithCode(1),
              "mailroom::yield called before mailroom::runtime exists");
  EXPECT_EXIT(mr::barrier(), testing::ExitedWithCode(1),
              "mailroom::barrier called before mailroom::runtime exists");
  EXPECT_EXIT(mr::finish([] {}), testing::ExitedWithCode(1),
              "mailroom::finish called before mailroom::runtime exists");
}

}  // namespace
