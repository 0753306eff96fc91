// The project's own pages as tests read them: a test that runs what a page
// shows takes it from the page's text, so the page cannot drift from what
// works.
#pragma once

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace echomq::test {

inline std::string read_doc(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The body of the first ```<lang> block after the line `heading` (e.g.
// "## A first queue") in the page at `path`; throws, naming what is
// missing, when there is none.
inline std::string fenced_block(const std::string& path, const std::string& heading, const std::string& lang) {
  const std::string page = read_doc(path);
  const std::size_t at = page.find("\n" + heading + "\n");
  if (at == std::string::npos) throw std::runtime_error(path + " has no '" + heading + "'");
  const std::string fence = "\n```" + lang + "\n";
  const std::size_t open = page.find(fence, at);
  const std::size_t close = open == std::string::npos ? open : page.find("\n```\n", open + 1);
  if (close == std::string::npos) throw std::runtime_error(path + ": no ```" + lang + " block under '" + heading + "'");
  return page.substr(open + fence.size(), close + 1 - (open + fence.size()));
}

// One fenced block of a page: the last `#` heading above it, its language
// (what follows the opening ```, "" for none), its body, and the line its
// body starts on.
struct DocBlock {
  std::string heading;
  std::string lang;
  std::string body;
  int line = 0;
};

// Every fenced block of the page at `path`, in order, each line without the
// fence's own indentation (a block inside a list item); throws when a block
// is never closed.
inline std::vector<DocBlock> fenced_blocks(const std::string& path) {
  std::istringstream page(read_doc(path));
  std::vector<DocBlock> out;
  std::string heading;
  bool open = false;
  std::size_t fence_indent = 0;
  int n = 0;
  for (std::string line; std::getline(page, line);) {
    ++n;
    const std::size_t indent = std::min(line.find_first_not_of(' '), line.size());
    const bool fence = line.compare(indent, 3, "```") == 0;
    if (open && fence && line.size() == indent + 3) {
      open = false;
    } else if (open) {
      out.back().body += line.substr(std::min(indent, fence_indent)) + "\n";
    } else if (fence) {
      out.push_back({heading, line.substr(indent + 3), "", n + 1});
      open = true;
      fence_indent = indent;
    } else if (line.rfind('#', 0) == 0) {
      heading = line;
    }
  }
  if (open) throw std::runtime_error(path + ":" + std::to_string(out.back().line - 1) + ": a block is never closed");
  return out;
}

}  // namespace echomq::test
