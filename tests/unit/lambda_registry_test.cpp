// The lambda-message registry as far as one process can see it: the per-closure entry (size,
// wire stride, name), registration at static initialisation, running a batch of closures from
// wire bytes, and that the handles lambda messages are meant to capture are trivially copyable.
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

constexpr std::uint32_t rounded_stride(std::size_t closure_bytes) {
  return static_cast<std::uint32_t>(4 + (closure_bytes + 3) / 4 * 4);
}

TEST(LambdaEntry, StrideIsTheIdPlusTheClosureRoundedUpToFourBytes) {
  const auto none = [] {};
  const std::int32_t i = 1;
  const auto four = [i] { (void)i; };
  const std::int64_t j = 2;
  const auto eight = [j] { (void)j; };
  const std::array<char, 9> nine{};
  const auto nine_bytes = [nine] { (void)nine; };
  const double a = 1, b = 2, c = 3;
  const auto twenty_four = [a, b, c] { (void)(a + b + c); };
  const std::array<char, 4096> page{};
  const auto largest = [page] { (void)page; };

  EXPECT_EQ(entry_of(none).stride, 8u);  // an empty closure still occupies one byte
  EXPECT_EQ(entry_of(four).size, 4u);
  EXPECT_EQ(entry_of(four).stride, 8u);
  EXPECT_EQ(entry_of(eight).stride, 12u);
  EXPECT_EQ(entry_of(nine_bytes).size, 9u);
  EXPECT_EQ(entry_of(nine_bytes).stride, 16u);
  EXPECT_EQ(entry_of(twenty_four).size, 24u);
  EXPECT_EQ(entry_of(twenty_four).stride, 28u);
  EXPECT_EQ(entry_of(largest).stride, 4u + 4096u);

  EXPECT_EQ(entry_of(none).stride, rounded_stride(sizeof(none)));
  EXPECT_EQ(entry_of(nine_bytes).stride, rounded_stride(sizeof(nine_bytes)));
  EXPECT_EQ(entry_of(twenty_four).stride, rounded_stride(sizeof(twenty_four)));
  // The entry (read by the receiver) and the sender's compile-time stride agree.
  EXPECT_EQ(entry_of(nine_bytes).stride, mr::detail::lambda_stride<decltype(nine_bytes)>);
  EXPECT_EQ(entry_of(largest).stride, mr::detail::lambda_stride<decltype(largest)>);
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

// Lays out lambda messages as the sender does: a 4-byte id, then the closure, `stride` apart.
class wire_buffer {
 public:
  template <class L>
  void put(std::uint32_t id, const L& closure) {
    ASSERT_LE(used_ + mr::detail::lambda_stride<L>, sizeof bytes_);
    std::memcpy(bytes_ + used_, &id, 4);
    std::memcpy(bytes_ + used_ + 4, &closure, sizeof(L));
    used_ += mr::detail::lambda_stride<L>;
  }
  [[nodiscard]] const std::byte* at(std::size_t offset) const { return bytes_ + offset; }
  [[nodiscard]] const std::byte* begin() const { return bytes_; }
  [[nodiscard]] const std::byte* end() const { return bytes_ + used_; }

 private:
  alignas(8) std::byte bytes_[512] = {};
  std::size_t used_ = 0;
};

// Gives L's entry a wire id for the duration of a test, as the runtime would at start-up.
template <class L>
class assigned_id {
 public:
  assigned_id(const L&, std::uint32_t id) { lambda_entry_of<L>.wire_id = id; }
  ~assigned_id() { lambda_entry_of<L>.wire_id = mr::detail::k_unassigned; }
  assigned_id(const assigned_id&) = delete;
  assigned_id& operator=(const assigned_id&) = delete;
};

TEST(LambdaEntry, InvokeRunRunsEveryClosureOfTheSameTypeInOrder) {
  std::vector<int> calls;
  std::vector<int>* log = &calls;
  const auto make = [log](int v) { return [log, v] { log->push_back(v); }; };
  const auto first = make(1);
  const assigned_id id(first, 7);
  wire_buffer wire;
  wire.put(7, first);
  wire.put(7, make(2));
  wire.put(7, make(3));
  const std::byte* stop = entry_of(first).invoke_run(wire.begin(), wire.end());
  EXPECT_EQ(stop, wire.end());
  EXPECT_EQ(calls, (std::vector<int>{1, 2, 3}));
}

TEST(LambdaEntry, InvokeRunStopsAtAnotherType) {
  int a_calls = 0, b_calls = 0;
  int* pa = &a_calls;
  int* pb = &b_calls;
  const auto a = [pa] { ++*pa; };
  const auto b = [pb] { ++*pb; };
  const assigned_id ida(a, 3);
  const assigned_id idb(b, 4);
  wire_buffer wire;
  wire.put(3, a);
  wire.put(3, a);
  wire.put(4, b);
  wire.put(3, a);
  const std::byte* p = entry_of(a).invoke_run(wire.begin(), wire.end());
  EXPECT_EQ(p, wire.at(std::size_t{2} * entry_of(a).stride));
  EXPECT_EQ(a_calls, 2);
  EXPECT_EQ(b_calls, 0);
  p = entry_of(b).invoke_run(p, wire.end());
  EXPECT_EQ(b_calls, 1);
  p = entry_of(a).invoke_run(p, wire.end());
  EXPECT_EQ(a_calls, 3);
  EXPECT_EQ(p, wire.end());
}

TEST(LambdaEntry, InvokeRunNeedsNoAlignmentAndSeesTheCapturedValues) {
  // A 4-byte id leaves 8-byte captures misaligned: the closure must still see its values.
  std::int64_t result = 0;
  std::int64_t* out = &result;
  std::int64_t v = 41;
  const double scale = 2.0;
  const auto f = [out, v, scale] {
    *out = static_cast<std::int64_t>(static_cast<double>(v + 1) * scale);
  };
  const assigned_id id(f, 0);
  wire_buffer wire;
  wire.put(0, f);
  v = 0;  // the closure travelled by value
  EXPECT_EQ(entry_of(f).invoke_run(wire.begin(), wire.end()), wire.end());
  EXPECT_EQ(result, 84);
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
