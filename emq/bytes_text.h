// Showing opaque bytes (payloads, results, error texts) to people and to
// JSON: as text when they are text, else as base64, and never cut inside a
// UTF-8 character.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "echomq/bytes.h"

namespace echomq::cli {

// UTF-8 with no control characters but tab, newline and carriage return:
// safe to print on a terminal as it is.
bool is_printable_text(std::string_view bytes);

// Bytes read from the server, fit to print on a terminal as one line:
// every control character (C0, DEL, C1), every bidirectional override or
// isolate, and every byte that is not UTF-8 becomes an escape (\n \r \t,
// \xHH for a byte, \uHHHH for a character); the rest is kept. Whatever
// another writer put in a field, it can then neither move the cursor,
// retitle the window, ring, nor forge a line. Every printer of emq passes
// server text through this one function (the tables and `say` do it).
std::string terminal_text(std::string_view bytes);
// terminal_text of bytes cut to at most max_chars characters, the last
// three "..." when it was cut (max_chars 0: not cut).
std::string terminal_cell(std::string_view bytes, std::size_t max_chars);
// The characters (not bytes) text takes on a terminal, for alignment.
std::size_t terminal_width(std::string_view text);

// Bytes fit for one table cell: the first line of printable text, cut to
// max_bytes with " ..." when there was more; "-" for none; a size note for
// bytes that are not text.
std::string text_cell(const std::optional<std::string>& bytes, std::size_t max_bytes);

// obj[name] = bytes when they are UTF-8, else obj[name + "_b64"] = base64:
// the same rule the pool handler protocol uses for payloads.
void put_bytes(nlohmann::ordered_json& obj, const std::string& name, std::string_view bytes);
// The same, or obj[name] = null when there are none (a field the row lacks).
void put_bytes_or_null(nlohmann::ordered_json& obj, const std::string& name, std::optional<std::string_view> bytes);

// obj[name] = bytes, plus obj[name + "_hex"] = their exact bytes in hex
// when they are not UTF-8 (json_text then shows U+FFFD for the bad ones):
// for names, ids and states another writer put there, which a reader must
// still recognise, and `emq web` links by the hex.
void put_text(nlohmann::ordered_json& obj, const std::string& name, std::string_view bytes);

// j as JSON text. Bytes that are not UTF-8 become U+FFFD rather than an
// exception: put_text has named them exactly beside.
std::string json_text(const nlohmann::ordered_json& j, int indent = -1);

// Lower-case hex, two digits a byte.
std::string hex_encode(std::string_view bytes);

// Bytes as `emq web` shows them: {"bytes": total, "text": ...} when they
// are UTF-8, else {"bytes": total, "hex": ...}; at most max_bytes of them
// (never cut inside a UTF-8 character), with "truncated": true when there
// was more. total is the whole's size (bytes may be a head of it).
nlohmann::ordered_json shown_bytes(std::string_view bytes, std::size_t max_bytes, std::size_t total);
inline nlohmann::ordered_json shown_bytes(std::string_view bytes, std::size_t max_bytes) {
  return shown_bytes(bytes, max_bytes, bytes.size());
}

}  // namespace echomq::cli
