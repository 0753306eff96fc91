#include "echomq/bytes.h"

#include <array>
#include <cstdint>

namespace echomq {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

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

}  // namespace

std::size_t utf8_char_length(std::string_view bytes) {
  if (bytes.empty()) return 0;
  const auto* s = reinterpret_cast<const unsigned char*>(bytes.data());
  const unsigned char c = s[0];
  if (c < 0x80) return 1;
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
    return 0;  // a continuation byte first, C0/C1 (overlong), or F5..FF
  }
  if (bytes.size() < len) return 0;
  for (std::size_t k = 1; k < len; ++k) {
    if ((s[k] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (s[k] & 0x3F);
  }
  if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000)) return 0;  // overlong
  if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

bool is_utf8(std::string_view bytes) {
  while (!bytes.empty()) {
    const std::size_t len = utf8_char_length(bytes);
    if (len == 0) return false;
    bytes.remove_prefix(len);
  }
  return true;
}

char32_t utf8_code_point(std::string_view bytes) {
  const std::size_t len = utf8_char_length(bytes);
  const auto byte = [&](std::size_t i) { return static_cast<char32_t>(static_cast<unsigned char>(bytes[i])); };
  if (len <= 1) return len == 0 ? 0 : byte(0);
  char32_t cp = byte(0) & (0x7Fu >> len);
  for (std::size_t i = 1; i < len; ++i) cp = (cp << 6) | (byte(i) & 0x3F);
  return cp;
}

bool is_terminal_control(char32_t cp) {
  // The bidirectional marks: ALM, LRM and RLM, the embeddings and
  // overrides, the isolates (a forged "txt.exe" shown as "exe.txt").
  const bool bidi =
      cp == 0x061C || cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
  return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || bidi;
}

bool is_plain_text(std::string_view bytes) {
  while (!bytes.empty()) {
    const std::size_t len = utf8_char_length(bytes);
    if (len == 0 || is_terminal_control(utf8_code_point(bytes))) return false;
    bytes.remove_prefix(len);
  }
  return true;
}

std::string_view utf8_prefix(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  std::size_t end = max_bytes;
  // Back off continuation bytes (10xxxxxx) to the start of the character.
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
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

}  // namespace echomq
