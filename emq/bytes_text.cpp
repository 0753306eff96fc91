#include "bytes_text.h"

#include <algorithm>
#include <cstdio>

namespace echomq::cli {

namespace {

void append_escape(std::string& out, char32_t cp, bool a_byte) {
  switch (cp) {
    case '\n': out += "\\n"; return;
    case '\r': out += "\\r"; return;
    case '\t': out += "\\t"; return;
    default: break;
  }
  char buf[12];
  std::snprintf(buf, sizeof buf, a_byte ? "\\x%02x" : "\\u%04x", static_cast<unsigned>(cp));
  out += buf;
}

}  // namespace

std::string terminal_text(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  while (!bytes.empty()) {
    const std::size_t len = utf8_char_length(bytes);
    if (len == 0) {
      append_escape(out, static_cast<unsigned char>(bytes[0]), true);
      bytes.remove_prefix(1);
      continue;
    }
    const char32_t cp = utf8_code_point(bytes);
    if (!is_terminal_control(cp)) {
      out.append(bytes.data(), len);
    } else {
      append_escape(out, cp, cp < 0x80);
    }
    bytes.remove_prefix(len);
  }
  return out;
}

std::string terminal_cell(std::string_view bytes, std::size_t max_chars) {
  if (max_chars == 0) return terminal_text(bytes);
  // Every byte shows as at least a quarter of a character: the bytes past
  // these could not show, and leaving them unread keeps a megabyte cheap.
  std::string text = terminal_text(bytes.substr(0, std::min(bytes.size(), 4 * max_chars + 4)));
  if (terminal_width(text) <= max_chars) return text;
  std::size_t kept = 0;
  std::size_t end = 0;
  for (; end < text.size(); ++end) {
    if ((static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) continue;
    if (kept == max_chars - std::min<std::size_t>(max_chars, 3)) break;
    ++kept;
  }
  text.resize(end);
  return text + "...";
}

std::size_t terminal_width(std::string_view text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

bool is_printable_text(std::string_view s) {
  if (!is_utf8(s)) return false;
  for (char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F) return false;
  }
  return true;
}

std::string text_cell(const std::optional<std::string>& bytes, std::size_t max_bytes) {
  if (!bytes || bytes->empty()) return "-";
  if (!is_printable_text(*bytes)) return "(not text, " + std::to_string(bytes->size()) + " bytes)";
  std::string_view line = std::string_view(*bytes).substr(0, bytes->find_first_of("\r\n"));
  std::string cell(utf8_prefix(line, max_bytes));
  const bool cut = cell.size() < bytes->size();
  std::replace(cell.begin(), cell.end(), '\t', ' ');
  cell = terminal_text(cell);  // printable text may still hold C1 controls and bidi marks
  return cut ? cell + " ..." : cell;
}

void put_bytes(nlohmann::ordered_json& obj, const std::string& name, std::string_view bytes) {
  if (is_utf8(bytes)) {
    obj[name] = std::string(bytes);
  } else {
    obj[name + "_b64"] = base64_encode(bytes);
  }
}

void put_bytes_or_null(nlohmann::ordered_json& obj, const std::string& name, std::optional<std::string_view> bytes) {
  if (bytes) {
    put_bytes(obj, name, *bytes);
  } else {
    obj[name] = nullptr;
  }
}

void put_text(nlohmann::ordered_json& obj, const std::string& name, std::string_view bytes) {
  obj[name] = std::string(bytes);
  if (!is_utf8(bytes)) obj[name + "_hex"] = hex_encode(bytes);
}

std::string json_text(const nlohmann::ordered_json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string hex_encode(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char ch : bytes) {
    const unsigned char c = static_cast<unsigned char>(ch);
    out += kDigits[c >> 4];
    out += kDigits[c & 0xF];
  }
  return out;
}

nlohmann::ordered_json shown_bytes(std::string_view bytes, std::size_t max_bytes, std::size_t total) {
  nlohmann::ordered_json out = {{"bytes", total}};
  if (is_utf8(bytes)) {
    const std::string_view head = utf8_prefix(bytes, max_bytes);
    out["text"] = std::string(head);
    out["truncated"] = head.size() < total;
  } else {
    const std::string_view head = bytes.substr(0, max_bytes);
    out["hex"] = hex_encode(head);
    out["truncated"] = head.size() < total;
  }
  return out;
}

}  // namespace echomq::cli
