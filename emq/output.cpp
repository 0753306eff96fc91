#include "output.h"

#include <ctime>
#include <iostream>

#include "bytes_text.h"

namespace echomq::cli {

void say(const std::string& message) { std::cerr << "emq: " << terminal_text(message) << '\n'; }

void say_no_job(const std::string& queue, const std::string& id) {
  say("no job " + id + " in queue " + queue +
      " (a completed job is deleted at once unless its queue keeps completed rows)");
}

std::string iso_time(std::int64_t epoch_ms) {
  // Floor division, so times before 1970 (never minted, but a peer may
  // write any score) still print as a valid instant.
  std::int64_t secs = epoch_ms / 1000;
  std::int64_t ms = epoch_ms % 1000;
  if (ms < 0) {
    ms += 1000;
    secs -= 1;
  }
  std::time_t t = static_cast<std::time_t>(secs);
  std::tm tm{};
  if (::gmtime_r(&t, &tm) == nullptr) return std::to_string(epoch_ms) + "ms";
  char buf[40];
  std::size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char frac[8];
  std::snprintf(frac, sizeof frac, ".%03dZ", static_cast<int>(ms));
  return std::string(buf, n) + frac;
}

Table::Table(std::vector<Column> columns) : columns_(std::move(columns)) {}

void Table::add(std::vector<std::string> cells) {
  cells.resize(columns_.size());
  for (std::size_t c = 0; c < cells.size(); ++c) cells[c] = terminal_cell(cells[c], columns_[c].max_chars);
  rows_.push_back(std::move(cells));
}

void Table::print(std::ostream& out) const {
  std::vector<std::size_t> width(columns_.size());
  for (std::size_t c = 0; c < columns_.size(); ++c) width[c] = columns_[c].name.size();
  for (const auto& row : rows_) {
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], terminal_width(row[c]));
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string text;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const bool last = c + 1 == cells.size();
      std::string pad(width[c] - terminal_width(cells[c]), ' ');
      if (columns_[c].right_aligned) {
        text += pad + cells[c];
      } else {
        text += cells[c];
        if (!last) text += pad;  // no trailing blanks at the end of a line
      }
      if (!last) text += "  ";
    }
    out << text << '\n';
  };
  std::vector<std::string> header;
  for (const Column& c : columns_) header.push_back(c.name);
  line(header);
  for (const auto& row : rows_) line(row);
}

}  // namespace echomq::cli
