// SPDX-License-Identifier: MIT
// The lambda-message registry as far as one process can see it: the per-closure entry (size,
// name), the wire coding of a closure type, registration at static initialisation, decoding and
// running a run of closures from wire bytes built as docs/design.md describes them, and that the
// handles lambda messages are meant to capture are trivially copyable.
#include <mailroom/mailroom.hpp>

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <vector>

namespace {

namespace mr = mailroom;
using mr::detail::lambda_entry_of;

template <class L>
mr::detail::lambda_entry& entry_of(const L&) {
  return lambda_entry_of<L>;
}

TEST(LambdaEntry, ClosuresTravelAsWordsDeltaCodedUpTo128Bytes) {
  const auto none = [] {};
  const std::int32_t i = 1;
  const auto four = [i] { (void)i; };
  const std::array<char, 9> nine{};
  const auto nine_bytes = [nine] { (void)nine; };
  const std::array<char, 64> sixty_four{};
  const auto eight_words = [sixty_four] { (void)sixty_four; };
  const std::array<char, 72> seventy_two{};
  const auto nine_words = [seventy_two] { (void)seventy_two; };
  const std::array<char, 129> big{};
  const auto whole = [big] { (void)big; };

  using mr::detail::lambda_delta_coded;
  using mr::detail::lambda_words;
  EXPECT_EQ(entry_of(four).size, 4u);
  EXPECT_EQ(entry_of(nine_bytes).size, 9u);
  EXPECT_EQ(lambda_words<decltype(none)>, 1u);  // an empty closure still occupies one byte
  EXPECT_EQ(lambda_words<decltype(four)>, 1u);
  EXPECT_EQ(lambda_words<decltype(nine_bytes)>, 2u);
  EXPECT_EQ(lambda_words<decltype(eight_words)>, 8u);
  EXPECT_EQ(lambda_words<decltype(nine_words)>, 9u);
  EXPECT_TRUE(lambda_delta_coded<decltype(eight_words)>);
  EXPECT_TRUE(lambda_delta_coded<decltype(nine_words)>);
  EXPECT_FALSE(lambda_delta_coded<decltype(whole)>);
}

TEST(LambdaEntry, SizeAndNameDescribeTheClosureType) {
  int x = 3;  // not const: a constant would not need capturing
  const auto f = [x] { (void)x; };
  const auto g = [x] { (void)(x + 1); };
  EXPECT_EQ(entry_of(f).size, sizeof(f));
  using F = std::remove_cvref_t<decltype(f)>;
  EXPECT_STREQ(entry_of(f).name, typeid(mr::detail::lambda_key<F, void>).name());
  // Two closure types never share an entry, even when their layout is the same.
  EXPECT_NE(&entry_of(f), &entry_of(g));
  EXPECT_STRNE(entry_of(f).name, entry_of(g).name);
  // A closure that takes `self` has an entry per selector type (its invoker casts to it).
  const auto h = [x](mr::pe, auto&) { (void)x; };
  using H = std::remove_cvref_t<decltype(h)>;
  struct selector_a {};
  struct selector_b {};
  const mr::detail::lambda_entry& a = lambda_entry_of<H, selector_a>;
  const mr::detail::lambda_entry& b = lambda_entry_of<H, selector_b>;
  EXPECT_NE(&a, &b);
  EXPECT_STRNE(a.name, b.name);
}

TEST(LambdaEntry, WireIdIsUnassignedBeforeTheRuntimeStarts) {
  const auto f = [] {};
  EXPECT_EQ(entry_of(f).wire_id, mr::detail::k_unassigned);
}

TEST(LambdaEntry, RegistrationHappensAtStaticInitialisation) {
  const auto f = [] {};
  using L = std::remove_const_t<decltype(f)>;
  EXPECT_TRUE(mr::detail::lambda_registered<L>);
}

// Lays out runs of lambda messages as docs/design.md describes the wire: [id][count][vary][0],
// the closure's constant words (those not in the `vary` mask) once, then per closure only its
// varying words; closures over 128 bytes go whole after [id][count].
class wire_run {
 public:
  template <class L>
  void put(std::uint32_t id, std::uint32_t vary, const std::vector<L>& closures) {
    constexpr std::size_t W = mr::detail::lambda_words<L>;
    const auto count = static_cast<std::uint32_t>(closures.size());
    const auto words_of = [](const L& c) {
      std::array<std::uint64_t, W> w{};
      std::memcpy(w.data(), &c, sizeof(L));
      return w;
    };
    append(&id, 4);
    append(&count, 4);
    if constexpr (mr::detail::lambda_delta_coded<L>) {
      const std::uint32_t zero = 0;
      append(&vary, 4);
      append(&zero, 4);
      const auto first = words_of(closures.front());
      for (std::size_t k = 0; k < W; ++k)
        if (((vary >> k) & 1u) == 0) append(&first[k], 8);
      for (const L& c : closures) {
        const auto w = words_of(c);
        for (std::size_t k = 0; k < W; ++k)
          if (((vary >> k) & 1u) != 0) append(&w[k], 8);
      }
    } else {
      for (const L& c : closures) append(words_of(c).data(), W * 8);
    }
  }
  [[nodiscard]] const std::byte* begin() const { return bytes_.data(); }
  [[nodiscard]] const std::byte* end() const { return bytes_.data() + used_; }
  [[nodiscard]] std::size_t size() const { return used_; }

 private:
  void append(const void* p, std::size_t n) {
    ASSERT_LE(used_ + n, bytes_.size());
    std::memcpy(bytes_.data() + used_, p, n);
    used_ += n;
  }
  alignas(8) std::array<std::byte, 4096> bytes_{};
  std::size_t used_ = 0;
};

TEST(LambdaEntry, InvokeRunRunsEveryClosureOfTheRunInOrder) {
  std::vector<int> calls;
  std::vector<int>* log = &calls;
  const auto make = [log](int v) { return [log, v] { log->push_back(v); }; };
  using L = decltype(make(0));
  wire_run wire;
  wire.put<L>(7, 0b10, {make(1), make(2), make(3), make(3)});
  EXPECT_EQ(entry_of(make(0)).invoke_run(wire.begin(), mr::pe(0), nullptr), wire.end());
  EXPECT_EQ(calls, (std::vector<int>{1, 2, 3, 3}));
}

TEST(LambdaEntry, SharedCapturesCrossTheWireOnce) {
  // The log pointer is the same in every closure: it travels once, in the run's header, and
  // each record is the one word that changes.
  std::vector<std::int64_t> calls;
  std::vector<std::int64_t>* log = &calls;
  const auto make = [log](std::int64_t v) { return [log, v] { log->push_back(v); }; };
  using L = decltype(make(0));
  std::vector<L> closures;
  for (std::int64_t v = 1; v <= 10; ++v) closures.push_back(make(v));
  wire_run wire;
  wire.put(1, 0b10, closures);
  EXPECT_EQ(wire.size(), 16 + 8 + 10 * 8);
  EXPECT_EQ(entry_of(make(0)).invoke_run(wire.begin(), mr::pe(0), nullptr), wire.end());
  ASSERT_EQ(calls.size(), 10u);
  for (std::int64_t v = 1; v <= 10; ++v) EXPECT_EQ(calls[static_cast<std::size_t>(v - 1)], v);
}

// Runs every set of varying words of a closure of W words (W - 1 captured values and a pointer
// to the result): the values in the set change from closure to closure, the others not, and
// every closure must see exactly its own values.
template <std::size_t W>
void check_every_vary_set() {
  for (std::uint32_t vary = 0; vary < (1u << W); ++vary) {
    std::vector<std::uint64_t> seen;
    std::vector<std::uint64_t>* out = &seen;
    std::array<std::int64_t, W - 1> values{};
    const auto make = [out](const std::array<std::int64_t, W - 1>& v) {
      return [out, v] {
        std::uint64_t h = 0;  // unsigned: the hash wraps
        for (const std::int64_t x : v) h = h * 1000003 + static_cast<std::uint64_t>(x);
        out->push_back(h);
      };
    };
    using L = decltype(make(values));
    static_assert(mr::detail::lambda_words<L> == W);
    // The pointer is word 0 (the first capture): it varies only if bit 0 is set, so then each
    // closure writes to the same vector through a pointer that is rewritten to itself.
    std::vector<L> closures;
    std::vector<std::uint64_t> want;
    for (std::int64_t r = 0; r < 5; ++r) {
      for (std::size_t k = 0; k + 1 < W; ++k)
        values[k] = (((vary >> (k + 1)) & 1u) != 0) ? r * 100 + static_cast<std::int64_t>(k)
                                                    : static_cast<std::int64_t>(k) - 7;
      closures.push_back(make(values));
      std::uint64_t h = 0;
      for (const std::int64_t x : values) h = h * 1000003 + static_cast<std::uint64_t>(x);
      want.push_back(h);
    }
    wire_run wire;
    wire.put(3, vary, closures);
    const std::size_t varying = static_cast<std::size_t>(__builtin_popcount(vary));
    EXPECT_EQ(wire.size(), 16 + 8 * (W - varying) + 5 * 8 * varying) << "vary " << vary;
    EXPECT_EQ(entry_of(closures.front()).invoke_run(wire.begin(), mr::pe(0), nullptr), wire.end())
        << "vary " << vary;
    EXPECT_EQ(seen, want) << "vary " << vary;
  }
}

TEST(LambdaEntry, EverySetOfVaryingWordsDecodes) {
  check_every_vary_set<2>();  // decoded by a loop per set (small closures)
  check_every_vary_set<4>();
  check_every_vary_set<7>();  // decoded by the general loop
}

TEST(LambdaEntry, InvokeRunSeesTheCapturedValues) {
  std::int64_t result = 0;
  std::int64_t* out = &result;
  std::int64_t v = 41;
  const double scale = 2.0;
  const auto f = [out, v, scale] {
    *out += static_cast<std::int64_t>(static_cast<double>(v + 1) * scale);
  };
  using L = std::remove_const_t<decltype(f)>;
  wire_run wire;
  wire.put<L>(0, 0, {f, f});
  v = 0;  // the closure travelled by value
  EXPECT_EQ(entry_of(f).invoke_run(wire.begin(), mr::pe(0), nullptr), wire.end());
  EXPECT_EQ(result, 168);
}

TEST(LambdaEntry, LargeClosuresTravelWhole) {
  std::int64_t sum = 0;
  std::int64_t* out = &sum;
  std::array<std::int64_t, 20> values{};
  for (std::size_t k = 0; k < values.size(); ++k) values[k] = static_cast<std::int64_t>(k);
  const auto f = [out, values] {
    for (auto x : values) *out += x;
  };
  using L = std::remove_const_t<decltype(f)>;
  static_assert(!mr::detail::lambda_delta_coded<L>);
  wire_run wire;
  wire.put<L>(2, 0, {f, f});
  EXPECT_EQ(wire.size(), 8 + 2 * 8 * mr::detail::lambda_words<L>);
  EXPECT_EQ(entry_of(f).invoke_run(wire.begin(), mr::pe(0), nullptr), wire.end());
  EXPECT_EQ(sum, 2 * 190);
}

// A closure capturing an int beside 8-byte values has padding; whatever the memory held there
// before, its words come out the same, so the word does not look varying from one send to the
// next.
TEST(LambdaEntry, PaddingIsClearedInTheWords) {
  const auto make = [](std::int64_t big, std::int32_t small) {
    return [=] { return big + small; };
  };
  using L = decltype(make(9, 7));
  static_assert(mr::detail::lambda_padded<L> && mr::detail::lambda_words<L> == 2);
  std::array<std::array<std::byte, 16>, 2> words{};
  std::array<std::array<std::byte, 16>, 2> placed{};
  for (std::size_t i = 0; i < 2; ++i) {
    alignas(L) std::byte at[sizeof(L)];
    std::memset(at, i == 0 ? 0xab : 0xcd, sizeof at);  // what the stack held
    const L* closure = ::new (static_cast<void*>(at)) L(make(9, 7));
    std::memcpy(placed[i].data(), at, sizeof(L));
    alignas(L) std::byte out[16];
    mr::detail::closure_words(*closure, out);
    std::memcpy(words[i].data(), out, 16);
    EXPECT_EQ((*closure)(), 16);
  }
  if (!MAILROOM_CLEARS_PADDING) GTEST_SKIP() << "this compiler cannot clear padding";
  EXPECT_NE(placed[0], placed[1]) << "the padding did not keep what the memory held (test moot)";
  EXPECT_EQ(words[0], words[1]);
}

// What lambda messages are told they may capture must indeed be trivially copyable.
static_assert(std::is_trivially_copyable_v<mr::pe>);
static_assert(std::is_trivially_copyable_v<mr::symmetric_array<double>>);
static_assert(sizeof(mr::symmetric_array<double>) == sizeof(void*), "a handle is one pointer");
static_assert(std::is_trivially_copyable_v<decltype(std::declval<const mr::actor<>&>().ref())>);
static_assert(std::is_trivially_copyable_v<mr::selector_ref<mr::selector<mr::lambdas>>>);

TEST(LambdaMessage, ClosureOverHandlesIsTriviallyCopyable) {
  const mr::symmetric_array<std::int64_t> table;
  const mr::selector_ref<mr::selector<mr::lambdas>> where(0);
  const mr::pe to(1);
  const auto f = [table, where, to] { (void)table, (void)where, (void)to; };
  EXPECT_TRUE(std::is_trivially_copyable_v<decltype(f)>);
  EXPECT_TRUE(std::is_invocable_v<const decltype(f)&>);
  const std::string s;
  const auto g = [s] { (void)s; };
  EXPECT_FALSE(std::is_trivially_copyable_v<decltype(g)>);
}

TEST(SymmetricArray, DefaultHandleIsEmpty) {
  const mr::symmetric_array<int> a;
  EXPECT_EQ(a.size(), 0u);
  EXPECT_EQ(a.data(), nullptr);
  EXPECT_EQ(a.begin(), a.end());
}

}  // namespace
