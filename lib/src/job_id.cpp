#include "echomq/job_id.h"

#include <array>
#include <chrono>
#include <mutex>
#include <random>

#include "echomq/errors.h"

namespace echomq {

namespace {
constexpr std::string_view kPrefix = "JOB_";
constexpr char kCrockford[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
constexpr std::size_t kUlidLength = 26;

bool id_byte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
         c == ':' || c == '-';
}

int crockford_value(char c) {
  for (int i = 0; i < 32; ++i) {
    if (kCrockford[i] == c) return i;
  }
  return -1;
}

// The last id's time and 80 random bits (as 16 + 64). A new millisecond
// draws fresh randomness; the same (or an earlier) one increments, which is
// what makes mint order equal byte order.
struct MintState {
  std::mutex mutex;
  std::uint64_t last_ms = 0;
  std::uint16_t rand_hi = 0;
  std::uint64_t rand_lo = 0;
  std::mt19937_64 rng{std::random_device{}()};
};

MintState& state() {
  static MintState s;
  return s;
}

std::string encode(std::uint64_t ms, std::uint16_t hi, std::uint64_t lo) {
  // 128 bits: 48 of time, 80 of randomness; 26 base32 digits hold 130.
  std::array<unsigned char, 16> bytes{};
  for (int i = 0; i < 6; ++i) bytes[i] = static_cast<unsigned char>(ms >> (8 * (5 - i)));
  bytes[6] = static_cast<unsigned char>(hi >> 8);
  bytes[7] = static_cast<unsigned char>(hi);
  for (int i = 0; i < 8; ++i) bytes[8 + i] = static_cast<unsigned char>(lo >> (8 * (7 - i)));

  std::string out(kPrefix);
  out.resize(kPrefix.size() + kUlidLength);
  // Read the 128 bits as 130 with two leading zero bits, 5 at a time.
  for (std::size_t digit = 0; digit < kUlidLength; ++digit) {
    int value = 0;
    for (int b = 0; b < 5; ++b) {
      int bit_index = static_cast<int>(digit) * 5 + b - 2;
      int bit = bit_index < 0 ? 0 : (bytes[bit_index / 8] >> (7 - bit_index % 8)) & 1;
      value = (value << 1) | bit;
    }
    out[kPrefix.size() + digit] = kCrockford[value];
  }
  return out;
}
}  // namespace

bool valid_job_id(std::string_view id) {
  if (id.size() <= kPrefix.size() || id.size() > kPrefix.size() + 128) return false;
  if (id.substr(0, kPrefix.size()) != kPrefix) return false;
  for (unsigned char c : id.substr(kPrefix.size())) {
    if (!id_byte(c)) return false;
  }
  return true;
}

bool passes_wire_gate(std::string_view id) { return id.substr(0, 3) == "JOB"; }

void check_wire_gate(std::string_view id) {
  if (passes_wire_gate(id)) return;
  // The kind gate is the wire's rule: answer it with the wire's word.
  throw Error(ErrorKind::Kind, "job id",
              "EMQKIND '" + std::string(id.substr(0, 80)) + "' is not JOB-namespaced: ids are JOB_ then 1-128 bytes");
}

void check_job_id(std::string_view id) {
  if (valid_job_id(id)) return;
  check_wire_gate(id);
  throw Error(ErrorKind::Invalid, "job id",
              "'" + std::string(id.substr(0, 80)) +
                  "' is not a valid job id: use JOB_ then 1-128 bytes of 0-9 A-Z a-z _ . : -");
}

std::string mint_job_id(std::uint64_t unix_ms) {
  MintState& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  unix_ms &= (std::uint64_t{1} << 48) - 1;
  if (unix_ms > s.last_ms) {
    s.last_ms = unix_ms;
    s.rand_hi = static_cast<std::uint16_t>(s.rng());
    // Keep the top bit clear so 2^63 increments fit before any carry.
    s.rand_lo = s.rng() >> 1;
  } else if (++s.rand_lo == 0 && ++s.rand_hi == 0) {
    ++s.last_ms;  // 80 bits exhausted within one millisecond: borrow the next
  }
  return encode(s.last_ms, s.rand_hi, s.rand_lo);
}

std::string mint_job_id() {
  auto now = std::chrono::system_clock::now().time_since_epoch();
  return mint_job_id(static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(now).count()));
}

std::optional<std::uint64_t> minted_at_ms(std::string_view id) {
  if (id.size() != kPrefix.size() + kUlidLength || id.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  std::string_view ulid = id.substr(kPrefix.size());
  // The first 10 digits hold 50 bits: two zero bits, then 48 of time.
  std::uint64_t ms = 0;
  for (std::size_t i = 0; i < kUlidLength; ++i) {
    int v = crockford_value(ulid[i]);
    if (v < 0) return std::nullopt;
    if (i < 10) ms = (ms << 5) | static_cast<std::uint64_t>(v);
  }
  if (ms >> 48) return std::nullopt;
  return ms;
}

}  // namespace echomq
