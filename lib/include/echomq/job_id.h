// Branded job ids: "JOB_" then 1-128 bytes of [0-9A-Za-z_.:-]. Minted ids are
// "JOB_" + a 26-character ULID, monotonic within a millisecond, so the byte
// order of ids is their mint order (and the pending set's order within a lane).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace echomq {

// The host-side form, for ids a speaker mints or takes from a user to
// enqueue. Throws Error{Kind} (EMQKIND) when the id is not JOB-namespaced,
// and Error{Invalid} naming the rule for any other malformed id.
bool valid_job_id(std::string_view id);
void check_job_id(std::string_view id);

// The wire's gate alone: the first three bytes are "JOB". Ids read back from
// the server (claimed, reaped, listed) and ids a user names to look at or
// cancel pass only this: another peer may have written any id the wire lets
// through, and one odd id must never stop a speaker (PROTOCOL.md, "Names").
// Throws Error{Kind} (EMQKIND) when the id does not pass.
bool passes_wire_gate(std::string_view id);
void check_wire_gate(std::string_view id);

// A new id for the current wall-clock millisecond. Thread-safe; strictly
// increasing within this process even if the clock steps back.
std::string mint_job_id();
// The same, for a given millisecond (tests, and callers that own the clock).
std::string mint_job_id(std::uint64_t unix_ms);

// The millisecond a minted id was minted in; nullopt for ids that are not
// "JOB_" + a ULID.
std::optional<std::uint64_t> minted_at_ms(std::string_view id);

}  // namespace echomq
