#include "emq/bytes_text.h"

namespace echomq::cli {

bool is_printable_text(std::string_view s) {
  if (!is_utf8(s)) return false;
  for (char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F) return false;
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

void put_bytes(nlohmann::ordered_json& obj, const std::string& name, std::string_view bytes) {
  if (is_utf8(bytes)) {
    obj[name] = std::string(bytes);
  } else {
    obj[name + "_b64"] = base64_encode(bytes);
  }
}

}  // namespace echomq::cli
