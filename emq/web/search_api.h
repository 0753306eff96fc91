// The search of `emq web` (docs/web.md, "Search"): GET /api/search and the
// bulk POSTs on what it finds, each one call of the library (search.h,
// bulk_actions.h), as `emq search` and the --match forms make it.
#pragma once

#include <string>

#include "echomq/executor.h"
#include "web/api.h"

namespace echomq::cli {

class SearchApi {
 public:
  // Jobs of a text search the answer details; the rest are counted.
  static constexpr std::size_t kShown = 50;

  explicit SearchApi(Executor& x) : x_(x) {}

  // The query of GET /api/search and of the bulk POSTs, "" when absent.
  struct Query {
    std::string q;      // the text, or the id
    std::string queue;  // absent: q is an id, looked for in every queue
    std::string state;  // default pending
    std::string in;     // payload (default), error or id (its prefix)
    std::string scan;   // default 10000
  };
  // GET /api/search
  ApiAnswer search(const Query& query);
  // POST /api/queues/Q/bulk/{retry,cancel}?match=…&state=S&scan=N: the
  // caller has checked the token, the origin and --read-only.
  ApiAnswer bulk(const std::string& queue, const std::string& action, const Query& query);

 private:
  Executor& x_;
};

}  // namespace echomq::cli
