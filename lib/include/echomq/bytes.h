// Opaque bytes (payloads, results) beside JSON and text: whether they may
// travel as a JSON string, and base64 for when they may not. The pool
// handler's frames and emq's output follow the same rule with these.
#pragma once

#include <string>
#include <string_view>

namespace echomq {

// Well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing
// past U+10FFFF): what a JSON string may carry as it is.
bool is_utf8(std::string_view bytes);
// The length of the well-formed UTF-8 character `bytes` starts with (1 to
// 4), or 0 when it starts with none (or is empty).
std::size_t utf8_char_length(std::string_view bytes);
// The code point of the well-formed UTF-8 character `bytes` starts with
// (utf8_char_length > 0).
char32_t utf8_code_point(std::string_view bytes);
// A character a terminal acts on rather than shows: a C0 or C1 control,
// DEL, or a bidirectional mark that reorders what follows it.
bool is_terminal_control(char32_t cp);
// Well-formed UTF-8 without such characters: what may be stored for people
// to read (who paused a queue, and why) and shown as it is.
bool is_plain_text(std::string_view bytes);
// The longest prefix of at most max_bytes that does not split a UTF-8
// character (for text that is_utf8 accepted): a preview or a table cell.
std::string_view utf8_prefix(std::string_view text, std::size_t max_bytes);
std::string base64_encode(std::string_view bytes);
// Standard alphabet with padding (RFC 4648 section 4); false on anything else.
bool base64_decode(std::string_view text, std::string& bytes);

}  // namespace echomq
