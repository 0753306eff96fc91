// GET /api/server (docs/web.md, "The server panel"): what an operator
// checks first about the Valkey behind the page, read-only and bounded:
// one INFO of four sections, of which only the named fields are passed on
// (version, uptime, clients, memory used and peak, maxmemory and its
// policy, whether the emq module is loaded), never the whole text.
#pragma once

#include "echomq/executor.h"
#include "web/api.h"

namespace echomq::cli {

ApiAnswer server_answer(Executor& x);

}  // namespace echomq::cli
