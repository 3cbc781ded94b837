// SPDX-License-Identifier: MIT
// The MAILROOM_* configuration: parsing of one value, reading the environment (defaults, limits,
// fatal errors that name the variable) and the printed description.
#include <mailroom/config.hpp>

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

using mailroom::config;
using mailroom::detail::parse_config_value;

constexpr std::uint64_t k_kib = 1ull << 10;
constexpr std::uint64_t k_mib = 1ull << 20;
constexpr std::uint64_t k_gib = 1ull << 30;

// Parses `text` as `kind`; the test fails when it is rejected.
std::uint64_t parsed(const char* kind, const std::string& text) {
  std::uint64_t v = 0;
  EXPECT_TRUE(parse_config_value(kind, text, v)) << kind << " '" << text << "' was rejected";
  return v;
}

bool accepted(const char* kind, const std::string& text) {
  std::uint64_t v = 0;
  return parse_config_value(kind, text, v);
}

TEST(ParseConfigValue, PlainCounts) {
  EXPECT_EQ(parsed("count", "0"), 0u);
  EXPECT_EQ(parsed("count", "1"), 1u);
  EXPECT_EQ(parsed("count", "16"), 16u);
  EXPECT_EQ(parsed("count", "007"), 7u);
  EXPECT_EQ(parsed("bytes", "8192"), 8192u);
}

TEST(ParseConfigValue, ByteSuffixesArePowersOfTwo) {
  EXPECT_EQ(parsed("bytes", "64K"), 64 * k_kib);
  EXPECT_EQ(parsed("bytes", "64k"), 64 * k_kib);
  EXPECT_EQ(parsed("bytes", "64KiB"), 64 * k_kib);
  EXPECT_EQ(parsed("bytes", "1M"), k_mib);
  EXPECT_EQ(parsed("bytes", "2MiB"), 2 * k_mib);
  EXPECT_EQ(parsed("bytes", "16m"), 16 * k_mib);
  EXPECT_EQ(parsed("bytes", "1G"), k_gib);
  EXPECT_EQ(parsed("bytes", "3GiB"), 3 * k_gib);
  EXPECT_EQ(parsed("bytes", "0K"), 0u);
}

TEST(ParseConfigValue, CountsTakeNoSuffix) {
  EXPECT_FALSE(accepted("count", "16K"));
  EXPECT_FALSE(accepted("count", "1M"));
  EXPECT_FALSE(accepted("count", "2GiB"));
}

TEST(ParseConfigValue, RejectsMalformedText) {
  for (const char* kind : {"bytes", "count"}) {
    for (const char* text : {"", "abc", "12x", "-1", "+1", "8Q", " 8", "8 ", "1.5", "0x10", "K"})
      EXPECT_FALSE(accepted(kind, text)) << kind << " '" << text << "' was accepted";
  }
  EXPECT_FALSE(accepted("bytes", "8KK"));
  EXPECT_FALSE(accepted("bytes", "8KiBx"));
  EXPECT_FALSE(accepted("bytes", "1.5M"));
  EXPECT_FALSE(accepted("bytes", "8T"));
}

TEST(ParseConfigValue, RejectsOverflow) {
  EXPECT_EQ(parsed("count", "18446744073709551615"), UINT64_MAX);
  EXPECT_FALSE(accepted("count", "18446744073709551616"));
  EXPECT_FALSE(accepted("count", "99999999999999999999"));
  EXPECT_FALSE(accepted("bytes", "99999999999999999999"));
  EXPECT_FALSE(accepted("bytes", "99999999999999999999K"));
  // The suffix multiplies: 2^34 GiB is 2^64 and overflows, one less does not.
  EXPECT_EQ(parsed("bytes", "17179869183G"), (UINT64_MAX >> 30) * k_gib);
  EXPECT_FALSE(accepted("bytes", "17179869184G"));
  EXPECT_FALSE(accepted("bytes", "18014398509481984K"));
}

// Every test of the environment starts from an environment with no MAILROOM_* variable, whatever
// the shell that runs the tests has set, and puts that environment back afterwards.
class ConfigEnvironment : public testing::Test {
 protected:
  void SetUp() override {
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
      const std::string kv(*e);
      if (kv.rfind("MAILROOM_", 0) != 0) continue;
      const auto eq = kv.find('=');
      saved_.emplace_back(kv.substr(0, eq), eq == std::string::npos ? "" : kv.substr(eq + 1));
    }
    for (const auto& [name, value] : saved_) unsetenv(name.c_str());
  }
  void TearDown() override {
    for (char** e = environ; e != nullptr && *e != nullptr;) {
      const std::string kv(*e);
      if (kv.rfind("MAILROOM_", 0) == 0) {
        unsetenv(kv.substr(0, kv.find('=')).c_str());
        e = environ;  // unsetenv may move the array: start over
      } else {
        ++e;
      }
    }
    for (const auto& [name, value] : saved_) setenv(name.c_str(), value.c_str(), 1);
  }
  static void set(const char* name, const char* value) { ASSERT_EQ(setenv(name, value, 1), 0); }

 private:
  std::vector<std::pair<std::string, std::string>> saved_;
};

using ConfigEnvironmentDeathTest = ConfigEnvironment;

TEST_F(ConfigEnvironment, DefaultsWhenUnset) {
  const config c = config::from_environment();
  const config d;
#define MAILROOM_TEST_UNSET(field, env, kind, def, doc) \
  EXPECT_EQ(c.field, d.field) << env;                   \
  EXPECT_EQ(c.field, static_cast<std::uint64_t>(def)) << env;
  MAILROOM_CONFIG_TABLE(MAILROOM_TEST_UNSET)
#undef MAILROOM_TEST_UNSET
  EXPECT_EQ(c.credits, 4u);
  EXPECT_EQ(c.verbose, 0u);
}

TEST_F(ConfigEnvironment, ReadsEachVariable) {
  set("MAILROOM_BUFFER_BYTES", "64K");
  set("MAILROOM_CREDITS", "4");
  set("MAILROOM_RECEIVES_POSTED", "32");
  set("MAILROOM_BUDGET_BYTES", "1GiB");
  set("MAILROOM_SYMMETRIC_HEAP_BYTES", "2G");
  set("MAILROOM_VERBOSE", "1");
  const config c = config::from_environment();
  EXPECT_EQ(c.buffer_bytes, 65536u);
  EXPECT_EQ(c.credits, 4u);
  EXPECT_EQ(c.receives_posted, 32u);
  EXPECT_EQ(c.budget_bytes, k_gib);
  EXPECT_EQ(c.symmetric_heap_bytes, 2 * k_gib);
  EXPECT_EQ(c.verbose, 1u);
}

TEST_F(ConfigEnvironment, OneVariableLeavesTheOthersAtTheirDefaults) {
  set("MAILROOM_BUFFER_BYTES", "64K");
  const config c = config::from_environment();
  const config d;
  EXPECT_EQ(c.buffer_bytes, 65536u);
  EXPECT_EQ(c.credits, d.credits);
  EXPECT_EQ(c.receives_posted, d.receives_posted);
  EXPECT_EQ(c.budget_bytes, d.budget_bytes);
  EXPECT_EQ(c.symmetric_heap_bytes, d.symmetric_heap_bytes);
  EXPECT_EQ(c.verbose, d.verbose);
}

// Each default, written out in the environment, is a valid value within its variable's range.
TEST_F(ConfigEnvironment, DefaultsAreValidSettings) {
  struct variable {
    const char* env;
    std::uint64_t def;
    const char* kind;
  };
  const std::vector<variable> table = {
#define MAILROOM_TEST_VARIABLE(field, env, kind, def, doc) {env, def, #kind},
      MAILROOM_CONFIG_TABLE(MAILROOM_TEST_VARIABLE)
#undef MAILROOM_TEST_VARIABLE
  };
  const std::string defaults = config().describe();
  for (const variable& v : table) {
    const std::string kind = v.kind;
    set(v.env, kind == "routing"    ? mailroom::routing_name(v.def)
               : kind == "progress" ? mailroom::progress_mode_name(v.def)
               : kind == "cache"    ? mailroom::cache_mode_name(v.def)
                                    : std::to_string(v.def).c_str());
    EXPECT_EQ(config::from_environment().describe(), defaults) << v.env;
    ASSERT_EQ(unsetenv(v.env), 0);
  }
}

TEST_F(ConfigEnvironment, BufferBytesLimitsAreInclusive) {
  set("MAILROOM_BUFFER_BYTES", "256");
  EXPECT_EQ(config::from_environment().buffer_bytes, 256u);
  set("MAILROOM_BUFFER_BYTES", "16MiB");
  EXPECT_EQ(config::from_environment().buffer_bytes, 16 * k_mib);
}

TEST_F(ConfigEnvironmentDeathTest, MalformedValueIsFatalAndNamesTheVariable) {
  set("MAILROOM_BUFFER_BYTES", "abc");
  EXPECT_EXIT(config::from_environment(), testing::ExitedWithCode(1),
              "MAILROOM_BUFFER_BYTES='abc' is not a valid value");
}

TEST_F(ConfigEnvironment, RoutingTakesItsNames) {
  for (const char* name : {"auto", "direct", "node"}) {
    set("MAILROOM_ROUTING", name);
    EXPECT_STREQ(mailroom::routing_name(config::from_environment().routing), name);
  }
  EXPECT_EQ(config::from_environment().routing,
            static_cast<std::uint64_t>(mailroom::routing::node));
  EXPECT_NE(config::from_environment().describe().find("node"), std::string::npos);
}

TEST_F(ConfigEnvironmentDeathTest, UnknownRoutingIsFatal) {
  set("MAILROOM_ROUTING", "mesh2");
  EXPECT_EXIT(config::from_environment(), testing::ExitedWithCode(1),
              "MAILROOM_ROUTING='mesh2' is not a valid value");
}

TEST_F(ConfigEnvironment, ProgressTakesItsNames) {
  for (const char* name : {"shared", "dedicated", "thread"}) {
    set("MAILROOM_PROGRESS", name);
    EXPECT_STREQ(mailroom::progress_mode_name(config::from_environment().progress), name);
  }
  set("MAILROOM_PROGRESS", "shared");
  EXPECT_EQ(config::from_environment().progress,
            static_cast<std::uint64_t>(mailroom::progress_mode::shared));
  EXPECT_NE(config::from_environment().describe().find("shared"), std::string::npos);
}

TEST_F(ConfigEnvironmentDeathTest, UnknownProgressIsFatal) {
  set("MAILROOM_PROGRESS", "1");
  EXPECT_EXIT(config::from_environment(), testing::ExitedWithCode(1),
              "MAILROOM_PROGRESS='1' is not a valid value");
}

TEST_F(ConfigEnvironmentDeathTest, EmptyValueIsFatal) {
  set("MAILROOM_RECEIVES_POSTED", "");
  EXPECT_EXIT(config::from_environment(), testing::ExitedWithCode(1),
              "MAILROOM_RECEIVES_POSTED='' is not a valid value");
}

TEST_F(ConfigEnvironmentDeathTest, SuffixOnACountIsFatal) {
  set("MAILROOM_CREDITS", "16K");
  EXPECT_EXIT(config::from_environment(), testing::ExitedWithCode(1), "MAILROOM_CREDITS");
}

TEST_F(ConfigEnvironmentDeathTest, OverflowIsFatal) {
  set("MAILROOM_BUDGET_BYTES", "99999999999999999999");
  EXPECT_EXIT(config::from_environment(), testing::ExitedWithCode(1), "MAILROOM_BUDGET_BYTES");
}

TEST_F(ConfigEnvironmentDeathTest, OutOfRangeIsFatal) {
  set("MAILROOM_BUFFER_BYTES", "255");
  EXPECT_EXIT(config::from_environment(), testing::ExitedWithCode(1),
              "MAILROOM_BUFFER_BYTES=255 is out of range");
  set("MAILROOM_BUFFER_BYTES", "16777217");
  EXPECT_EXIT(config::from_environment(), testing::ExitedWithCode(1),
              "MAILROOM_BUFFER_BYTES=16777217 is out of range");
  ASSERT_EQ(unsetenv("MAILROOM_BUFFER_BYTES"), 0);
  set("MAILROOM_CREDITS", "0");
  EXPECT_EXIT(config::from_environment(), testing::ExitedWithCode(1),
              "MAILROOM_CREDITS=0 is out of range");
  ASSERT_EQ(unsetenv("MAILROOM_CREDITS"), 0);
  set("MAILROOM_SYMMETRIC_HEAP_BYTES", "1K");
  EXPECT_EXIT(config::from_environment(), testing::ExitedWithCode(1),
              "MAILROOM_SYMMETRIC_HEAP_BYTES=1024 is out of range");
  ASSERT_EQ(unsetenv("MAILROOM_SYMMETRIC_HEAP_BYTES"), 0);
  set("MAILROOM_IDLE_SLEEP_NS", "1000000001");
  EXPECT_EXIT(config::from_environment(), testing::ExitedWithCode(1),
              "MAILROOM_IDLE_SLEEP_NS=1000000001 is out of range");
}

TEST_F(ConfigEnvironmentDeathTest, UnknownVariableIsFatalAndListsTheKnownOnes) {
  set("MAILROOM_FOO", "1");
  EXPECT_EXIT(config::from_environment(), testing::ExitedWithCode(1),
              "unknown environment variable MAILROOM_FOO; the known ones are "
              "MAILROOM_[A-Z_, ]*MAILROOM_BUFFER_BYTES, [A-Z_, ]*MAILROOM_WATCHDOG");
}

TEST_F(ConfigEnvironmentDeathTest, NameThatExtendsAKnownOneIsUnknownAndTheKnownOneSuggested) {
  set("MAILROOM_BUFFER_BYTESS", "8K");
  EXPECT_EXIT(config::from_environment(), testing::ExitedWithCode(1),
              "unknown environment variable MAILROOM_BUFFER_BYTESS \\(did you mean "
              "MAILROOM_BUFFER_BYTES\\?\\)");
  ASSERT_EQ(unsetenv("MAILROOM_BUFFER_BYTESS"), 0);
  set("MAILROOM_WATCHDOC", "5");
  EXPECT_EXIT(config::from_environment(), testing::ExitedWithCode(1),
              "MAILROOM_WATCHDOC \\(did you mean MAILROOM_WATCHDOG\\?\\)");
}

TEST_F(ConfigEnvironmentDeathTest, FarFromEveryKnownNameSuggestsNone) {
  set("MAILROOM_QUUX_QUUX_QUUX", "1");
  EXPECT_EXIT(config::from_environment(), testing::ExitedWithCode(1),
              "unknown environment variable MAILROOM_QUUX_QUUX_QUUX; the known");
}

TEST(ConfigDescribe, MentionsEveryVariableOnItsOwnLine) {
  const std::string text = config().describe();
  for (const char* name :
       {"MAILROOM_BUFFER_BYTES", "MAILROOM_CREDITS", "MAILROOM_RECEIVES_POSTED",
        "MAILROOM_BUDGET_BYTES", "MAILROOM_SYMMETRIC_HEAP_BYTES", "MAILROOM_VERBOSE"})
    EXPECT_NE(text.find(name), std::string::npos) << name << " missing from:\n" << text;
  const std::vector<std::pair<const char*, const char*>> table = {
#define MAILROOM_TEST_VARIABLE(field, env, kind, def, doc) {env, doc},
      MAILROOM_CONFIG_TABLE(MAILROOM_TEST_VARIABLE)
#undef MAILROOM_TEST_VARIABLE
  };
  for (const auto& [env, doc] : table) {
    EXPECT_NE(text.find(env), std::string::npos) << env << " missing from:\n" << text;
    EXPECT_NE(text.find(doc), std::string::npos) << env << "'s description missing:\n" << text;
  }
  int lines = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) ++lines;
  // (and the variables of text, MAILROOM_TRACE among them, outside the table of numbers)
  int text_rows = 0;
#define MAILROOM_TEST_TEXT_VARIABLE(env, doc)                                        \
  ++text_rows;                                                                       \
  EXPECT_NE(text.find(env), std::string::npos) << env << " missing from:\n" << text; \
  EXPECT_NE(text.find(doc), std::string::npos) << env << "'s description missing:\n" << text;
  MAILROOM_CONFIG_TEXT_TABLE(MAILROOM_TEST_TEXT_VARIABLE)
#undef MAILROOM_TEST_TEXT_VARIABLE
  EXPECT_NE(text.find("MAILROOM_TRACE"), std::string::npos) << text;
  EXPECT_EQ(lines, static_cast<int>(table.size()) + text_rows);
}

TEST(ConfigDescribe, ShowsTheValuesInForce) {
  config c;
  c.buffer_bytes = 12345;
  c.credits = 77;
  std::istringstream in(c.describe());
  bool saw_buffer = false, saw_sends = false;
  for (std::string line; std::getline(in, line);) {
    if (line.find("MAILROOM_BUFFER_BYTES") != std::string::npos &&
        line.find("MAILROOM_NODE_BUFFER_BYTES") == std::string::npos) {
      saw_buffer = true;
      EXPECT_NE(line.find(" 12345 "), std::string::npos) << line;
    }
    if (line.find("MAILROOM_CREDITS") != std::string::npos) {
      saw_sends = true;
      EXPECT_NE(line.find(" 77 "), std::string::npos) << line;
    }
  }
  EXPECT_TRUE(saw_buffer);
  EXPECT_TRUE(saw_sends);
}

TEST(CurrentConfig, DefaultsBeforeTheRuntimeAndSetByIt) {
  const config before = mailroom::current_config();
  EXPECT_EQ(before.buffer_bytes, config().buffer_bytes);
  EXPECT_EQ(before.budget_bytes, config().budget_bytes);
  config c;
  c.buffer_bytes = 4096;
  mailroom::detail::set_current_config(c);
  EXPECT_EQ(mailroom::current_config().buffer_bytes, 4096u);
  mailroom::detail::set_current_config(before);
  EXPECT_EQ(mailroom::current_config().buffer_bytes, config().buffer_bytes);
}

}  // namespace
