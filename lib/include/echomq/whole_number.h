// The readers of a number in text: one per form, each taking the whole
// text or nothing (no '+', no space, no unit), and saying so by nullopt
// rather than by clamping or stopping early. Used for numbers read from
// the server (counters, scores, lengths, entry ids) and written by a
// person (ports, counts, times); each caller says what it wanted. No other
// code converts text to a number (tests/lib/number_readers_test.cpp holds
// the tree to it); grammars of their own (durations, cron fields, the emq
// module's mirror of Lua's tonumber) keep their readers.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace echomq {

// An optional '-', then decimal digits, within int64.
std::optional<std::int64_t> whole_number(std::string_view text);

// whole_number within lo..hi. A range that starts at 0 or above takes no
// '-' at all: "-0" is no count, no port and no time.
std::optional<std::int64_t> whole_number_in(std::string_view text, std::int64_t lo, std::int64_t hi);

// A number as the scripts read a field of the server's (a limit, a
// policy, a time): "0", or an optional '-' and digits without a leading
// zero, at most 18 characters, within lo..hi. "-0", "05" and "+5" are
// not of the form, so claim refuses them and so must every reader.
std::optional<std::int64_t> server_integer_in(std::string_view text, std::int64_t lo, std::int64_t hi);

// A TCP port: digits alone, in lowest..65535 (lowest 0 where the kernel
// may choose one).
std::optional<int> port_number(std::string_view text, int lowest = 1);

// A stream entry id "<ms>-<seq>" (XADD's), each part digits alone within
// uint64; ordered as the stream orders them.
struct StreamEntryId {
  std::uint64_t ms = 0;
  std::uint64_t seq = 0;
  bool operator<(const StreamEntryId& o) const { return ms != o.ms ? ms < o.ms : seq < o.seq; }
  bool operator>(const StreamEntryId& o) const { return o < *this; }
};
std::optional<StreamEntryId> stream_entry_id(std::string_view text);

// A finite decimal number, as the server writes a score or a person a
// fraction ("1.5", "-2", "1e3"); not "inf", "nan" or hex.
std::optional<double> decimal_number(std::string_view text);

// Whether a text the reader refused is a number of its form that the type
// cannot hold (twenty digits; 1e999): to say "out of range" rather than
// "not a number".
bool past_whole_number(std::string_view text);
bool past_decimal_number(std::string_view text);

}  // namespace echomq
