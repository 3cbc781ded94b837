// SPDX-License-Identifier: MIT
// Messages of types that need serialising (strings, vectors of neighbours, maps, structs with a
// serialize function): a mailbox of mailroom::serialized<T> takes values of T, written with
// cereal's binary archive into a variable-size message (mailroom::span_of) and read back on the
// receiving PE before the handler runs, as handler(const T& value, from, self), (value, from) or
// (value). Needs cereal (Debian: libcereal-dev; CMake: cereal::cereal) and, in the program, the
// cereal/types/... header of each standard type it sends (cereal/types/vector.hpp, string.hpp):
//
//   #include <mailroom/serialized.hpp>
//   #include <cereal/types/string.hpp>
//   mr::actor<mr::serialized<std::string>> names([&](const std::string& s, mr::pe from) {...});
//   names.send(mr::pe(1), std::string("twelve"));
//
// T must be default-constructible (it is read into a fresh T). The sending and receiving PEs are
// the same kind of machine (cereal's binary archive is not portable between byte orders).
#pragma once

#include "mailroom/error.hpp"
#include "mailroom/selector.hpp"

#include <cereal/archives/binary.hpp>

#include <cstddef>
#include <istream>
#include <ostream>
#include <span>
#include <streambuf>
#include <typeinfo>
#include <vector>

namespace mailroom {

namespace detail {
// cereal's archives read and write streams: stream buffers over mailroom's bytes (no copies).
class bytes_out final : public std::streambuf {
 public:
  explicit bytes_out(std::vector<std::byte>& out) : out_(out) {}

 protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    out_.push_back(static_cast<std::byte>(traits_type::to_char_type(c)));
    return c;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    const auto* p = reinterpret_cast<const std::byte*>(s);
    out_.insert(out_.end(), p, p + n);
    return n;
  }

 private:
  std::vector<std::byte>& out_;
};

class bytes_in final : public std::streambuf {
 public:
  explicit bytes_in(std::span<const std::byte> in) {
    // The get area is read only: std::streambuf wants char*, and nothing writes through it.
    char* p = const_cast<char*>(reinterpret_cast<const char*>(in.data()));
    setg(p, p, p + in.size());
  }
};
}  // namespace detail

/// The message type of a mailbox of values of T serialised with cereal (see the top of this
/// header): `mailroom::mailbox<mailroom::serialized<T>>(handler)`, sent with send<I>(pe, value).
/// The bytes travel as a variable-size message: aggregated with others when they fit in a
/// buffer, in pieces when larger.
template <class T>
struct serialized {
  /// What `send<I>` takes and the handler receives.
  using value_type = T;

  /// Appends value's bytes to out.
  static void encode(const T& value, std::vector<std::byte>& out) {
    detail::bytes_out buf(out);
    std::ostream os(&buf);
    cereal::BinaryOutputArchive archive(os);
    archive(value);
  }
  /// Reads a T from bytes (all of them); a message that does not decode stops the job.
  static T decode(std::span<const std::byte> bytes) {
    detail::bytes_in buf(bytes);
    std::istream is(&buf);
    T value{};
    try {
      cereal::BinaryInputArchive archive(is);
      archive(value);
    } catch (const cereal::Exception& e) {
      MAILROOM_FAIL("a message of serialized<{}> ({} bytes) does not decode: {}", typeid(T).name(),
                    bytes.size(), e.what());
    }
    MAILROOM_CHECK(is.rdbuf()->in_avail() == 0,
                   "a message of serialized<{}> ({} bytes) decodes with {} bytes left over: "
                   "the sender's and receiver's serialize functions differ",
                   typeid(T).name(), bytes.size(), is.rdbuf()->in_avail());
    return value;
  }
};

}  // namespace mailroom
