#include "handlers/pool_protocol.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>

namespace echomq::daemon {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
// How much of a bad line an error message quotes.
constexpr std::size_t kQuoteBytes = 120;

// -1 for a byte outside the alphabet.
const std::array<int, 256>& decode_table() {
  static const std::array<int, 256> table = [] {
    std::array<int, 256> t{};
    t.fill(-1);
    for (int i = 0; i < 64; ++i) t[static_cast<unsigned char>(kAlphabet[i])] = i;
    return t;
  }();
  return table;
}

// The start of a line, as a JSON string: safe in a log line and in the
// job's error text whatever the bytes were.
std::string quote_start(std::string_view line) {
  std::string start(line.substr(0, kQuoteBytes));
  std::string quoted = nlohmann::json(start).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return line.size() > kQuoteBytes ? quoted + "…" : quoted;
}

std::string type_name(const nlohmann::json& v) { return v.type_name(); }

}  // namespace

bool is_utf8(std::string_view bytes) {
  const auto* s = reinterpret_cast<const unsigned char*>(bytes.data());
  const std::size_t n = bytes.size();
  std::size_t i = 0;
  while (i < n) {
    const unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t len = 0;
    std::uint32_t cp = 0;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
      cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;  // a continuation byte first, C0/C1 (overlong), or F5..FF
    }
    if (n - i < len) return false;
    for (std::size_t k = 1; k < len; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (s[i + k] & 0x3F);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000)) return false;  // overlong
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += len;
  }
  return true;
}

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  const auto byte = [&](std::size_t k) { return static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[k])); };
  for (; i + 3 <= bytes.size(); i += 3) {
    const std::uint32_t v = byte(i) << 16 | byte(i + 1) << 8 | byte(i + 2);
    for (int shift : {18, 12, 6, 0}) out.push_back(kAlphabet[(v >> shift) & 0x3F]);
  }
  const std::size_t rest = bytes.size() - i;
  if (rest == 1) {
    const std::uint32_t v = byte(i) << 16;
    out += {kAlphabet[v >> 18 & 0x3F], kAlphabet[v >> 12 & 0x3F], '=', '='};
  } else if (rest == 2) {
    const std::uint32_t v = byte(i) << 16 | byte(i + 1) << 8;
    out += {kAlphabet[v >> 18 & 0x3F], kAlphabet[v >> 12 & 0x3F], kAlphabet[v >> 6 & 0x3F], '='};
  }
  return out;
}

bool base64_decode(std::string_view text, std::string& bytes) {
  if (text.size() % 4 != 0) return false;
  const auto& table = decode_table();
  bytes.clear();
  bytes.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    int pad = 0;
    if (last && text[i + 3] == '=') pad = text[i + 2] == '=' ? 2 : 1;
    std::uint32_t v = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      int d = 0;
      if (k >= 4 - static_cast<std::size_t>(pad)) {
        d = 0;
      } else {
        d = table[static_cast<unsigned char>(text[i + k])];
        if (d < 0) return false;
      }
      v = v << 6 | static_cast<std::uint32_t>(d);
    }
    bytes.push_back(static_cast<char>(v >> 16 & 0xFF));
    if (pad < 2) bytes.push_back(static_cast<char>(v >> 8 & 0xFF));
    if (pad < 1) bytes.push_back(static_cast<char>(v & 0xFF));
  }
  return true;
}

std::string encode_job_frame(const Job& job) {
  nlohmann::ordered_json frame;
  frame["id"] = job.id;
  frame["queue"] = job.queue;
  frame["attempt"] = job.attempt;
  frame["deadline_ms"] = job.deadline_ms;
  if (is_utf8(job.payload)) {
    frame["payload"] = job.payload;
  } else {
    frame["payload_b64"] = base64_encode(job.payload);
  }
  // ids and queue names are ASCII by the keyspace's rules; `replace` only
  // keeps a broken one from throwing.
  return frame.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string parse_reply_frame(std::string_view line, Reply& reply) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(line.begin(), line.end());
  } catch (const nlohmann::json::exception& e) {
    // parse_error, and out_of_range for a number past a double ("3e333",
    // found by fuzz/pool_frame_fuzz.cpp): a bad line either way.
    std::string why = e.what();
    // "[json.exception.parse_error.101] parse error at ...; last read: '…'":
    // keep the human part; the line is quoted below, made safe.
    if (auto bracket = why.find("] "); bracket != std::string::npos) why.erase(0, bracket + 2);
    if (auto last = why.find("; last read:"); last != std::string::npos) why.erase(last);
    if (!is_utf8(why)) why = "invalid bytes";
    return "the reply line is not JSON (" + why + "): " + quote_start(line);
  }
  if (!j.is_object()) return "the reply is a JSON " + type_name(j) + ", not an object: " + quote_start(line);

  const auto id = j.find("id");
  if (id == j.end() || !id->is_string()) return "the reply has no \"id\" string: " + quote_start(line);
  const auto ok = j.find("ok");
  if (ok == j.end() || !ok->is_boolean()) return "the reply has no \"ok\" true or false: " + quote_start(line);

  Reply r;
  r.id = id->get<std::string>();
  r.ok = ok->get<bool>();
  if (r.ok) {
    const auto text = j.find("result");
    const auto b64 = j.find("result_b64");
    if (text != j.end() && b64 != j.end()) return "the reply has both \"result\" and \"result_b64\"; send one";
    if (text != j.end()) {
      if (!text->is_string()) return "\"result\" is a " + type_name(*text) + ", expected a string";
      r.result = text->get<std::string>();
    } else if (b64 != j.end()) {
      if (!b64->is_string() || !base64_decode(b64->get_ref<const std::string&>(), r.result)) {
        return "\"result_b64\" is not a base64 string (RFC 4648, with padding)";
      }
    }
  } else {
    if (const auto error = j.find("error"); error != j.end()) {
      if (!error->is_string()) return "\"error\" is a " + type_name(*error) + ", expected a string";
      r.error = error->get<std::string>();
    }
    if (const auto permanent = j.find("permanent"); permanent != j.end()) {
      if (!permanent->is_boolean()) return "\"permanent\" is a " + type_name(*permanent) + ", expected true or false";
      r.permanent = permanent->get<bool>();
    }
  }
  reply = std::move(r);
  return {};
}

}  // namespace echomq::daemon
