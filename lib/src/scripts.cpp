#include "echomq/scripts.h"

#include <utility>

#include "script_sources.h"

namespace echomq {

namespace {
// The six core transitions name their twin in the emq module (PROTOCOL.md,
// "The native module"), and so do complete_flow and fail_flow: a child's
// settle is the one flow step each job of a flow takes (issue 41;
// docs/decisions.md). The one list a transition goes into besides its file,
// and only when the module runs it too.
constexpr std::pair<Script, const char*> kNativeTwins[] = {
    {Script::Enqueue, "EMQ.ENQUEUE"},
    {Script::Claim, "EMQ.CLAIM"},
    {Script::Extend, "EMQ.EXTEND"},
    {Script::Complete, "EMQ.COMPLETE"},
    {Script::Fail, "EMQ.FAIL"},
    {Script::Release, "EMQ.RELEASE"},
    {Script::CompleteFlow, "EMQ.COMPLETE_FLOW"},
    {Script::FailFlow, "EMQ.FAIL_FLOW"},
};

const char* native_twin(Script s) {
  for (const auto& [script, command] : kNativeTwins) {
    if (script == s) return command;
  }
  return nullptr;
}

std::array<ScriptInfo, kScriptCount> table() {
  std::array<ScriptInfo, kScriptCount> t{};
  for (std::size_t i = 0; i < kScriptCount; ++i) {
    const Script s = static_cast<Script>(i);
    const detail::ScriptHeader h = detail::script_header(s);
    t[i] = {s, h.name, h.num_keys, native_twin(s), h.optional_keys, h.events};
  }
  return t;
}
}  // namespace

const std::array<ScriptInfo, kScriptCount>& all_scripts() {
  static const std::array<ScriptInfo, kScriptCount> scripts = table();
  return scripts;
}

const ScriptInfo& script_info(Script s) { return all_scripts()[static_cast<std::size_t>(s)]; }

const char* script_source(Script s) { return detail::script_source(s); }

}  // namespace echomq
