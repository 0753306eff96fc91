// The JSON API of `emq web` (docs/web.md, "API"): what the page reads and
// the actions its buttons take, each one call of the library (stats.h,
// jobs.h, job_actions.h) through one Executor, so the page and the CLI
// read and act alike. Knows nothing of HTTP beyond a status per answer:
// http.cpp routes to it, checks who asks, and writes the answer.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "echomq/executor.h"
#include "echomq/jobs.h"

namespace echomq::cli {

struct ApiAnswer {
  int status = 200;
  nlohmann::ordered_json body;
};

// Raw bytes of one field of a job's row (its whole payload, result or
// error), for the link under a truncated one.
struct RawField {
  int status = 200;
  bool utf8 = false;
  std::string bytes;  // the field, or the error's text when status != 200
};

class WebApi {
 public:
  // Jobs per page of a queue's listing unless the query asks for 100 or 500.
  static constexpr std::int64_t kPageSize = 50;

  // trace_url: --trace-url's template (trace_url.h), "" when not given.
  WebApi(Executor& x, bool read_only, std::string trace_url = "")
      : x_(x), read_only_(read_only), trace_url_(std::move(trace_url)) {}
  // For the reads that live in files of their own (history_api.h).
  Executor& executor() { return x_; }

  // GET /api/queues
  ApiAnswer queues();
  // GET /api/queues/Q?state=S&page=N&size=50|100|500 (N from 1): state,
  // page and size as given in the query, "" when absent; state "retries"
  // lists the delayed jobs that failed before.
  ApiAnswer queue(const std::string& name, const std::string& state, const std::string& page,
                  const std::string& size = "");
  // GET /api/queues/Q/jobs/ID
  ApiAnswer job(const std::string& name, const std::string& id);
  // GET /api/queues/Q/jobs/ID/{payload,result,error}
  RawField job_field(const std::string& name, const std::string& id, const std::string& field);

  // GET /api/daemons: every live daemon with the jobs it runs.
  ApiAnswer daemons();

  // POST actions. The caller has checked the token and the origin.
  // pause: who, why and for how long, as the query gave them ("" when not).
  struct PauseQuery {
    std::string by;
    std::string reason;
    std::string for_text;  // a duration: 90s, 30m, 2h, 1d
  };
  ApiAnswer pause(const std::string& name, bool paused, const PauseQuery& how = {});
  // POST /api/daemons/ID/{quiet,stop}: sends the signal and answers with
  // the server time it was sent at; the page reads /api/daemons until the
  // daemon's ack answers it.
  ApiAnswer signal_daemon(const std::string& id, const std::string& signal);
  ApiAnswer retry_all(const std::string& name);
  ApiAnswer retry(const std::string& name, const std::string& id);
  ApiAnswer cancel(const std::string& name, const std::string& id);

 private:
  Executor& x_;
  bool read_only_;
  std::string trace_url_;
};

// One listed job as /api/queues/Q lists it: search answers share it.
nlohmann::ordered_json listed_job_json(const JobSummary& j, JobState state);

// A JSON error answer: {"error": message}, plus "server_unreachable": true
// for 503, which the page shows as such.
ApiAnswer api_error(int status, const std::string& message);

// Runs f, turning what the library throws into an answer: a bad queue name
// or id 400, the server unreachable or slow 503, anything else it said 502.
ApiAnswer guarded_api(const std::function<ApiAnswer()>& f);

}  // namespace echomq::cli
