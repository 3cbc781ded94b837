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
// T must be default-constructible. It is read into a fresh T, or, for a string, a vector of
// numbers, or a type marked `mailroom::reuse_decoded` (below), into one the mailbox keeps, whose
// memory the next message reuses. A large value is written straight into its pieces, after a run
// of cereal that only counts its bytes. The sending and receiving PEs are the same kind of
// machine (cereal's binary archive is not portable between byte orders).
#pragma once

#include "mailroom/error.hpp"
#include "mailroom/selector.hpp"

#include <cereal/archives/binary.hpp>

#include <cstddef>
#include <cstring>
#include <istream>
#include <limits>
#include <ostream>
#include <span>
#include <streambuf>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

namespace mailroom {

namespace detail {
// cereal's archives read and write streams: stream buffers over mailroom's bytes (no copies).
// What cereal writes goes to put(data, n), which returns false to refuse it (cereal then
// throws).
template <class Put>
class bytes_out final : public std::streambuf {
 public:
  explicit bytes_out(const Put& put) : put_(put) {}

 protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    const char ch = traits_type::to_char_type(c);
    return put_(&ch, 1) ? c : traits_type::eof();
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    return put_(s, static_cast<std::size_t>(n)) ? n : 0;
  }

 private:
  const Put& put_;
};
// Writes value with cereal's binary archive into put (see bytes_out).
template <class T, class Put>
void write_binary(const T& value, const Put& put) {
  bytes_out<Put> buf(put);
  std::ostream os(&buf);
  cereal::BinaryOutputArchive archive(os);
  archive(value);
}

class bytes_in final : public std::streambuf {
 public:
  explicit bytes_in(std::span<const std::byte> in) {
    // The get area is read only: std::streambuf wants char*, and nothing writes through it.
    char* p = const_cast<char*>(reinterpret_cast<const char*>(in.data()));
    setg(p, p, p + in.size());
  }
};

// Whether cereal loads every byte of a T into an existing one (a string, a vector of numbers:
// resized, then read whole), so that decoding into a kept T gives what a fresh one would, and a
// large one can be placed straight from its pieces (its layout: the element count, then the
// elements' bytes).
template <class T>
inline constexpr bool refills = false;
template <class C, class Tr, class A>
inline constexpr bool refills<std::basic_string<C, Tr, A>> = std::is_arithmetic_v<C>;
template <class U, class A>
inline constexpr bool refills<std::vector<U, A>> =
    std::is_arithmetic_v<U> && !std::is_same_v<U, bool>;
}  // namespace detail

/// Whether messages of serialized<T> are decoded into one T that the mailbox keeps from message
/// to message (its memory reused: a stream of large messages takes no fresh pages each), rather
/// than into a fresh T. True for strings and vectors of numbers. Mark a type of yours when its
/// serialize function sets every member it holds on loading, as cereal's own types do (a vector
/// is resized, a map cleared first), so that decoding into the last message's value gives what a
/// fresh one would; a member it leaves alone would carry over from the last message:
///
///   template <>
///   inline constexpr bool mailroom::reuse_decoded<my_record> = true;  // at namespace scope
///
/// (after my_record, before the first mailbox of it).
/// The handler then sees the kept value (const T&), until the next message of the mailbox.
template <class T>
inline constexpr bool reuse_decoded = detail::refills<T>;

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
    encode(value, out, std::numeric_limits<std::size_t>::max());
  }
  /// Appends value's bytes to out unless they are more than `limit` in all: then false, and out
  /// holds no more than `limit` bytes (what a send puts in one item; larger values are written
  /// in pieces, below).
  static bool encode(const T& value, std::vector<std::byte>& out, std::size_t limit) {
    bool full = false;
    try {
      detail::write_binary(value, [&](const char* s, std::size_t n) {
        if (n > limit - out.size()) return !(full = true);
        out.insert(out.end(), reinterpret_cast<const std::byte*>(s),
                   reinterpret_cast<const std::byte*>(s) + n);
        return true;
      });
    } catch (const cereal::Exception&) {
      if (!full) throw;
    }
    return !full;
  }
  /// The number of value's bytes (cereal run into a counter: the bytes are not copied).
  static std::size_t size(const T& value) {
    std::size_t bytes = 0;
    detail::write_binary(value, [&](const char*, std::size_t n) { return (bytes += n, true); });
    return bytes;
  }
  /// Writes value's bytes into a large message's pieces.
  static void encode(const T& value, detail::piece_writer& out) {
    detail::write_binary(value,
                         [&](const char* s, std::size_t n) { return (out.write(s, n), true); });
  }
  /// Reads a T from bytes (all of them); a message that does not decode stops the job.
  static T decode(std::span<const std::byte> bytes) {
    T value{};
    decode(bytes, value);
    return value;
  }
  /// Reads bytes into value, as cereal loads into an existing object (a string or vector is
  /// resized, keeping its memory when large enough).
  static void decode(std::span<const std::byte> bytes, T& value) {
    detail::bytes_in buf(bytes);
    std::istream is(&buf);
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
  }
};

namespace detail {
// A T that reuse_decoded marks is decoded into the one kept here (its memory reused), unless a
// handler runs on it now (it sent, and the send ran this handler again) or a large message is
// being placed in it. A large T that refills is placed: its elements go from the pieces straight
// into the kept T, sized by its length, and its first word is checked once all have arrived.
// Other large ones are decoded from the reassembled bytes into the kept T.
template <class T, class H, class Sel>
  requires reuse_decoded<T>
struct decoding_handler<T, H, Sel> {
  H inner;
  T kept{};
  bool busy = false;
  void operator()(std::span<const std::byte> bytes, pe from, Sel& self) {
    if (busy) {
      const T value = serialized<T>::decode(bytes);
      return call_handler(inner, value, from, self);
    }
    serialized<T>::decode(bytes, kept);
    run(from, self);
  }
  std::byte* place(std::uint64_t total, std::size_t& split)
    requires refills<T>
  {
    constexpr std::size_t tag = sizeof(cereal::size_type), elem = sizeof(typename T::value_type);
    if (busy || total < tag || (total - tag) % elem != 0) return nullptr;
    busy = true;
    kept.resize((total - tag) / elem);
    split = tag;
    return reinterpret_cast<std::byte*>(kept.data());
  }
  void placed(std::uint64_t head, pe from, Sel& self)
    requires refills<T>
  {
    cereal::size_type count;
    std::memcpy(&count, &head, sizeof count);
    MAILROOM_CHECK(count == kept.size(),
                   "a message of serialized<{}> ({} elements) says it holds {}: the sender's and "
                   "receiver's serialize functions differ",
                   typeid(T).name(), kept.size(), count);
    run(from, self);
  }

 private:
  void run(pe from, Sel& self) {
    busy = true;
    call_handler(inner, std::as_const(kept), from, self);
    busy = false;
  }
};
template <class T, class H, class Sel>
  requires reuse_decoded<T>
inline constexpr bool places_pieces<decoding_handler<T, H, Sel>> = refills<T>;
}  // namespace detail

}  // namespace mailroom
