#include "config/config_document.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <yaml-cpp/eventhandler.h>

namespace echomq::daemon {

namespace {

// How deep emqd reads a YAML document. No setting nests past 5 levels, and a
// plugin's config has room to spare below this; past it, yaml-cpp's own limit
// would refuse the file with no line, and the walks over the tree recurse.
constexpr std::size_t kMaxDepth = 64;

// Walks a text's events before anything is built from them: where each
// document starts (its first node is where an error about it points), each
// YAML alias, and how deep the nesting goes. Aliases are refused because
// nested ones multiply: 800 bytes expand to billions of values (issue 24).
struct DocumentScan : YAML::EventHandler {
  std::vector<YAML::Mark> starts;  // OnDocumentStart, for spotting a parser that does not move
  std::vector<YAML::Mark> nodes;   // its first node, or its start when it is empty
  std::size_t aliases = 0;
  YAML::Mark first_alias;
  std::string first_alias_key;  // the dotted key it stands at, as the loader names keys

  // Thrown from inside the parser, which stops it where the nesting passes kMaxDepth.
  struct TooDeep {
    YAML::Mark mark;
    std::string key;
  };

  void OnDocumentStart(const YAML::Mark& mark) override {
    starts.push_back(mark);
    nodes.push_back(mark);
    first_node_seen_ = false;
    open_.clear();
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { node(mark); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override {
    const std::string key = node(mark);
    if (aliases++ == 0) {
      first_alias = mark;
      first_alias_key = key;
    }
  }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t, const std::string& value) override {
    node(mark, &value);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    open(mark, false);
  }
  void OnSequenceEnd() override { open_.pop_back(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    open(mark, true);
  }
  void OnMapEnd() override { open_.pop_back(); }

 private:
  // A mapping or a list being read, and where its next node stands.
  struct Open {
    bool mapping;
    std::string key;  // its own dotted key
    std::size_t index = 0;
    bool at_key = true;  // mapping: the next node is a key, not a value
    std::string last_key{};
  };

  void open(const YAML::Mark& mark, bool mapping) {
    const std::string key = node(mark);
    if (open_.size() >= kMaxDepth) throw TooDeep{mark, key};
    open_.push_back(Open{mapping, key});
  }

  // Notes a node; returns the dotted key it stands at ("" for the document,
  // a mapping's own key for one of its keys).
  std::string node(const YAML::Mark& mark, const std::string* scalar = nullptr) {
    if (!first_node_seen_ && !nodes.empty()) nodes.back() = mark;
    first_node_seen_ = true;
    if (open_.empty()) return "";
    Open& o = open_.back();
    if (!o.mapping) return o.key + "[" + std::to_string(o.index++) + "]";
    if (o.at_key) {
      o.at_key = false;
      o.last_key = scalar != nullptr ? *scalar : "?";
      return o.key;
    }
    o.at_key = true;
    return o.key.empty() ? o.last_key : o.key + "." + o.last_key;
  }

  bool first_node_seen_ = false;
  std::vector<Open> open_;
};

// The alias's name as written at `mark` ("*a"), for the error.
std::string alias_text(const std::string& text, const YAML::Mark& mark) {
  if (mark.pos < 0 || static_cast<std::size_t>(mark.pos) >= text.size()) return "*";
  const std::size_t end = text.find_first_of(" \t\r\n,[]{}", static_cast<std::size_t>(mark.pos));
  return text.substr(static_cast<std::size_t>(mark.pos), std::min<std::size_t>(end, text.size()) - mark.pos);
}

// Scans the documents of `text` before anything is built from it. Not
// YAML::LoadAll: on a stray ',' outside [ ] or { } (",\n" is enough),
// yaml-cpp 0.7 hands out one empty document after another without moving
// on, and LoadAll collects them until memory runs out (found by
// fuzz/config_fuzz.cpp). A document that starts where the previous one did
// means the parser is stuck there. Returns false, having reported it.
bool scan_documents(ConfigReader& r, const std::string& text, DocumentScan& scan) {
  std::stringstream stream(text);
  YAML::Parser parser(stream);
  try {
    while (parser.HandleNextDocument(scan)) {
      const std::size_t n = scan.starts.size();
      if (n >= 2 && scan.starts[n - 1].pos == scan.starts[n - 2].pos) {
        const YAML::Mark& at = scan.starts[n - 1];
        const bool comma = at.pos >= 0 && static_cast<std::size_t>(at.pos) < text.size() && text[at.pos] == ',';
        r.error(at.line + 1, "(syntax)",
                "expected valid YAML: the parser cannot get past column " + std::to_string(at.column + 1) +
                    (comma ? " (a ',' outside [ ] or { }; quote the value if it starts with one)" : ""));
        return false;
      }
    }
  } catch (const DocumentScan::TooDeep& deep) {
    r.error(deep.mark.line + 1, deep.key.empty() ? "(top)" : deep.key,
            "nested deeper than " + std::to_string(kMaxDepth) +
                " levels of mappings and lists, the most emqd reads; flatten it");
    return false;
  }
  if (scan.aliases > 0) {
    r.error(scan.first_alias.line + 1, scan.first_alias_key.empty() ? "(top)" : scan.first_alias_key,
            "YAML aliases are not supported (" + alias_text(text, scan.first_alias) + " here, " +
                std::to_string(scan.aliases) +
                " in the file): write the value out, or put what queues share under defaults:");
    return false;
  }
  return true;
}

// Only a regular file or a pipe
// (`--config <(...)`) is read, and at most kMaxConfigBytes of it: a device
// such as /dev/zero would otherwise be read until memory runs out.
constexpr std::size_t kMaxConfigBytes = 4 << 20;

}  // namespace

bool read_document(ConfigReader& r, const std::string& path, YAML::Node& root) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    r.error(1, "(file)", std::string("expected a readable YAML file: ") + std::strerror(errno) + " (see --config)");
    return false;
  }
  if (S_ISDIR(st.st_mode)) {
    r.error(1, "(file)", "expected a YAML file, but this is a directory (see --config)");
    return false;
  }
  if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
    r.error(1, "(file)", "expected a YAML file, but this is a device or socket (see --config)");
    return false;
  }
  const std::string too_big = "expected a YAML file of at most " + std::to_string(kMaxConfigBytes >> 20) +
                              " MiB; this one is larger (see --config)";
  if (S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) > kMaxConfigBytes) {
    r.error(1, "(file)", too_big);
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in.is_open()) {
    r.error(1, "(file)", std::string("expected a readable YAML file: ") + std::strerror(errno));
    return false;
  }
  std::string bytes(kMaxConfigBytes + 1, '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (in.bad()) {
    r.error(1, "(file)", std::string("expected a readable YAML file: ") + std::strerror(errno));
    return false;
  }
  bytes.resize(static_cast<std::size_t>(in.gcount()));
  if (bytes.size() > kMaxConfigBytes) {
    r.error(1, "(file)", too_big);
    return false;
  }
  DocumentScan documents;
  try {
    if (!scan_documents(r, bytes, documents)) return false;
    if (documents.nodes.size() == 1) root = YAML::Load(bytes);
  } catch (const YAML::Exception& e) {
    r.error(e.mark.line >= 0 ? e.mark.line + 1 : 1, "(syntax)", "expected valid YAML: " + e.msg);
    return false;
  }
  if (documents.nodes.empty()) {
    r.error(1, "(top)", "the file holds no settings; expected at least queues:");
    return false;
  }
  if (documents.nodes.size() > 1) {
    r.error(
        documents.nodes[1].line + 1, "(top)",
        "expected one YAML document, found " + std::to_string(documents.nodes.size()) + "; remove the --- separators");
    return false;
  }
  return true;
}

}  // namespace echomq::daemon
