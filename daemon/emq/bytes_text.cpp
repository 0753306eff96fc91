#include "emq/bytes_text.h"

#include <algorithm>

namespace echomq::cli {

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
  std::replace(cell.begin(), cell.end(), '\t', ' ');
  if (cell.size() < bytes->size()) cell += " ...";
  return cell;
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

}  // namespace echomq::cli
