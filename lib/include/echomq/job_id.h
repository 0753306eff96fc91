// Branded job ids: "JOB_" then 1-128 bytes of [0-9A-Za-z_.:-]. Minted ids are
// "JOB_" + a 26-character ULID, monotonic within a millisecond, so the byte
// order of ids is their mint order (and the pending set's order within a lane).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace echomq {

bool valid_job_id(std::string_view id);
// Throws Error{Kind} (EMQKIND) when the id is not JOB-namespaced, and
// Error{Invalid} naming the rule for any other malformed id.
void check_job_id(std::string_view id);

// A new id for the current wall-clock millisecond. Thread-safe; strictly
// increasing within this process even if the clock steps back.
std::string mint_job_id();
// The same, for a given millisecond (tests, and callers that own the clock).
std::string mint_job_id(std::uint64_t unix_ms);

// The millisecond a minted id was minted in; nullopt for ids that are not
// "JOB_" + a ULID.
std::optional<std::uint64_t> minted_at_ms(std::string_view id);

}  // namespace echomq
