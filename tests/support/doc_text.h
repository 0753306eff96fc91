// The project's own pages as tests read them: a test that runs what a page
// shows takes it from the page's text, so the page cannot drift from what
// works.
#pragma once

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

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

}  // namespace echomq::test
