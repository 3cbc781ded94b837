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
  using mr::detail::lambda_mask_t;
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
  EXPECT_TRUE((std::is_same_v<lambda_mask_t<decltype(eight_words)>, std::uint8_t>));
  EXPECT_TRUE((std::is_same_v<lambda_mask_t<decltype(nine_words)>, std::uint16_t>));
}

TEST(LambdaEntry, SizeAndNameDescribeTheClosureType) {
  int x = 3;  // not const: a constant would not need capturing
  const auto f = [x] { (void)x; };
  const auto g = [x] { (void)(x + 1); };
  EXPECT_EQ(entry_of(f).size, sizeof(f));
  EXPECT_STREQ(entry_of(f).name, typeid(f).name());
  // Two closure types never share an entry, even when their layout is the same.
  EXPECT_NE(&entry_of(f), &entry_of(g));
  EXPECT_STRNE(entry_of(f).name, entry_of(g).name);
}

TEST(LambdaEntry, WireIdIsUnassignedBeforeTheRuntimeStarts) {
  const auto f = [] {};
  EXPECT_EQ(entry_of(f).wire_id, mr::detail::k_unassigned);
}

TEST(LambdaEntry, RegistrationHappensAtStaticInitialisation) {
  const auto f = [] {};
  using L = decltype(f);
  EXPECT_TRUE(mr::detail::lambda_registered<L>);
}

// Lays out one run of lambda messages as docs/design.md describes the wire: [id][count], then
// per closure a mask of the 8-byte words that differ from the previous closure of the run (the
// first is compared with zeros) followed by those words; closures over 128 bytes go whole.
class wire_run {
 public:
  template <class L>
  void put(std::uint32_t id, const L& closure) {
    constexpr std::size_t W = mr::detail::lambda_words<L>;
    if (used_ == 0) {
      std::memcpy(bytes_, &id, 4);
      used_ = 8;
    }
    std::uint64_t words[W] = {};
    std::memcpy(words, &closure, sizeof(L));
    if constexpr (mr::detail::lambda_delta_coded<L>) {
      using mask_t = mr::detail::lambda_mask_t<L>;
      mask_t mask = 0;
      std::size_t at = used_ + sizeof(mask_t);
      for (std::size_t k = 0; k < W; ++k) {
        if (words[k] == last_[k]) continue;
        mask = static_cast<mask_t>(mask | (mask_t{1} << k));
        std::memcpy(bytes_ + at, &words[k], 8);
        at += 8;
        last_[k] = words[k];
      }
      std::memcpy(bytes_ + used_, &mask, sizeof(mask_t));
      used_ = at;
    } else {
      std::memcpy(bytes_ + used_, words, W * 8);
      used_ += W * 8;
    }
    ++count_;
    std::memcpy(bytes_ + 4, &count_, 4);
  }
  [[nodiscard]] const std::byte* begin() const { return bytes_; }
  [[nodiscard]] const std::byte* end() const { return bytes_ + used_; }
  [[nodiscard]] std::size_t size() const { return used_; }

 private:
  alignas(8) std::byte bytes_[1024] = {};
  std::size_t used_ = 0;
  std::uint32_t count_ = 0;
  std::uint64_t last_[16] = {};
};

TEST(LambdaEntry, InvokeRunRunsEveryClosureOfTheRunInOrder) {
  std::vector<int> calls;
  std::vector<int>* log = &calls;
  const auto make = [log](int v) { return [log, v] { log->push_back(v); }; };
  const auto first = make(1);
  wire_run wire;
  wire.put(7, first);
  wire.put(7, make(2));
  wire.put(7, make(3));
  wire.put(7, make(3));
  EXPECT_EQ(entry_of(first).invoke_run(wire.begin()), wire.end());
  EXPECT_EQ(calls, (std::vector<int>{1, 2, 3, 3}));
}

TEST(LambdaEntry, SharedCapturesCrossTheWireOnce) {
  // The log pointer is the same in every closure: after the first record, each record carries
  // a one-byte mask and the one word that changed.
  std::vector<std::int64_t> calls;
  std::vector<std::int64_t>* log = &calls;
  const auto make = [log](std::int64_t v) { return [log, v] { log->push_back(v); }; };
  wire_run wire;
  for (std::int64_t v = 1; v <= 10; ++v) wire.put(1, make(v));
  EXPECT_EQ(wire.size(), 8 + (1 + 16) + 9 * (1 + 8));
  EXPECT_EQ(entry_of(make(0)).invoke_run(wire.begin()), wire.end());
  EXPECT_EQ(calls.size(), 10u);
  for (std::int64_t v = 1; v <= 10; ++v) EXPECT_EQ(calls[static_cast<std::size_t>(v - 1)], v);
}

TEST(LambdaEntry, InvokeRunNeedsNoAlignmentAndSeesTheCapturedValues) {
  // One-byte masks leave the 8-byte words misaligned: the closure must still see its values.
  std::int64_t result = 0;
  std::int64_t* out = &result;
  std::int64_t v = 41;
  const double scale = 2.0;
  const auto f = [out, v, scale] {
    *out += static_cast<std::int64_t>(static_cast<double>(v + 1) * scale);
  };
  wire_run wire;
  wire.put(0, f);
  wire.put(0, f);
  v = 0;  // the closure travelled by value
  EXPECT_EQ(entry_of(f).invoke_run(wire.begin()), wire.end());
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
  static_assert(!mr::detail::lambda_delta_coded<decltype(f)>);
  wire_run wire;
  wire.put(2, f);
  wire.put(2, f);
  EXPECT_EQ(entry_of(f).invoke_run(wire.begin()), wire.end());
  EXPECT_EQ(sum, 2 * 190);
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
