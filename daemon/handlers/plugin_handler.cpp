#include "handlers/plugin_handler.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <exception>
#include <stdexcept>
#include <utility>

namespace echomq::daemon {
namespace {

// The size of the buffer create() may write its error message into.
constexpr std::size_t kCreateErrorBytes = 1024;

// What one handle() call wrote through its emq_result. The writers are
// called by foreign code: they never throw, and they check what they are
// given.
struct Answer {
  const Job* job = nullptr;  // its progress, for report_progress
  std::size_t result_limit = 0;
  std::string result;
  std::string error;
  bool result_over_limit = false;
  bool null_result = false;

  static int write_result(void* ctx, const void* bytes, std::size_t len) noexcept {
    auto* self = static_cast<Answer*>(ctx);
    if (len == 0) return 0;
    if (bytes == nullptr) {
      self->null_result = true;
      return -1;
    }
    if (self->result_over_limit || len > self->result_limit - self->result.size()) {
      self->result_over_limit = true;
      return -1;
    }
    try {
      self->result.append(static_cast<const char*>(bytes), len);
    } catch (...) {  // out of memory: as good as over the limit
      self->result_over_limit = true;
      return -1;
    }
    return 0;
  }

  static int write_error(void* ctx, const char* text, std::size_t len) noexcept {
    auto* self = static_cast<Answer*>(ctx);
    if (len == 0) return 0;
    if (text == nullptr) return -1;
    const std::size_t room = PluginHandler::kMaxErrorBytes - self->error.size();
    try {
      self->error.append(text, std::min(len, room));
    } catch (...) {
      return -1;
    }
    return len <= room ? 0 : -1;
  }

  static int trace_context(void* ctx, const char** traceparent, const char** tracestate) noexcept {
    auto* self = static_cast<Answer*>(ctx);
    if (self == nullptr || traceparent == nullptr || tracestate == nullptr) return -1;
    *traceparent = self->job->traceparent.c_str();
    *tracestate = self->job->tracestate.c_str();
    return 0;
  }

  static int report_progress(void* ctx, const char* text, std::size_t len) noexcept {
    auto* self = static_cast<Answer*>(ctx);
    if (self == nullptr || (text == nullptr && len > 0) || len > kMaxProgressBytes) return -1;
    try {
      if (self->job->progress) self->job->progress(std::string_view(text == nullptr ? "" : text, len));
    } catch (...) {
      return -1;
    }
    return 0;
  }
};

// The services a plugin that exports emq_plugin_host is given.
const emq_host kHost{sizeof(emq_host), &Answer::report_progress, &Answer::trace_context};

}  // namespace

PluginHandler::PluginHandler(Params params) : params_(std::move(params)) {}

PluginHandler::~PluginHandler() { shutdown(); }

void PluginHandler::start() {
  const std::string where = "queue " + params_.queue + ": plugin handler: ";
  try {
    library_.emplace(params_.handler.path);
  } catch (const std::exception& e) {
    throw std::runtime_error(where + e.what());
  }
  const std::string& config = params_.handler.plugin_config_json;
  char err[kCreateErrorBytes] = {};
  void* state = nullptr;
  try {
    if (library_->host() != nullptr) library_->host()(&kHost);
    state = library_->create()(config.c_str(), config.size(), err, sizeof err);
  } catch (const std::exception& e) {
    library_.reset();
    throw std::runtime_error(where + "emq_plugin_create threw (a plugin must not let exceptions out): " + e.what());
  } catch (...) {
    library_.reset();
    throw std::runtime_error(where + "emq_plugin_create threw (a plugin must not let exceptions out)");
  }
  if (state == nullptr) {
    err[sizeof err - 1] = '\0';  // the plugin may have filled the buffer to the end
    library_.reset();
    const std::string why = err[0] != '\0' ? err : "it gave no reason";
    throw std::runtime_error(where + "emq_plugin_create failed for " + params_.handler.path + ": " + why +
                             " (check the queue's handler.config)");
  }
  state_ = state;
}

Outcome PluginHandler::run(const Job& job, const StopToken& stop) {
  if (stop.requested()) return Outcome::stopped();
  if (state_ == nullptr) return Outcome::failed(Outcome::Verdict::Retry, "plugin handler is not started");

  emq_job in{};
  in.queue = job.queue.data();
  in.queue_len = job.queue.size();
  in.id = job.id.data();
  in.id_len = job.id.size();
  in.payload = job.payload.empty() ? nullptr : reinterpret_cast<const unsigned char*>(job.payload.data());
  in.payload_len = job.payload.size();
  in.attempt = job.attempt;
  in.deadline_ms = job.deadline_ms;

  Answer answer;
  answer.job = &job;
  answer.result_limit = static_cast<std::size_t>(std::max<std::int64_t>(params_.handler.max_output_bytes, 0));
  emq_result out{&answer, &Answer::write_result, &Answer::write_error};

  // A parent goes through the flows entry point when the plugin has one.
  std::vector<emq_child> children;
  const emq_plugin_handle_parent_fn parent_fn = job.children.empty() ? nullptr : library_->handle_parent();
  if (parent_fn != nullptr) {
    for (const ChildResult& c : job.children) {
      children.push_back(
          {c.queue.data(), c.queue.size(), c.id.data(), c.id.size(), c.outcome == ChildOutcome::Completed ? 1 : 0,
           c.text.empty() ? nullptr : reinterpret_cast<const unsigned char*>(c.text.data()), c.text.size()});
    }
  }

  int code = -1;
  std::string thrown;
  try {
    code = parent_fn != nullptr ? parent_fn(state_, &in, children.data(), children.size(), &out)
                                : library_->handle()(state_, &in, &out);
  } catch (const std::exception& e) {
    thrown = std::string("emq_plugin_handle threw: ") + e.what();
  } catch (...) {
    thrown = "emq_plugin_handle threw an exception that is not a std::exception";
  }

  // The call could not be interrupted; its answer no longer counts.
  if (stop.requested()) {
    return Outcome::stopped("the plugin's answer was discarded");
  }
  if (!thrown.empty()) {
    spdlog::warn("queue={} job={}: plugin {}: {} (a plugin must not let exceptions out)", job.queue, job.id,
                 params_.handler.path, thrown);
    return Outcome::failed(Outcome::Verdict::Retry, thrown);
  }
  switch (code) {
    case EMQ_PLUGIN_OK: break;
    case EMQ_PLUGIN_RETRY:
      return Outcome::failed(Outcome::Verdict::Retry,
                             answer.error.empty() ? "the plugin failed the job" : answer.error);
    case EMQ_PLUGIN_PERMANENT:
      return Outcome::failed(Outcome::Verdict::Dead,
                             answer.error.empty() ? "the plugin failed the job permanently" : answer.error);
    default: {
      const std::string error = "emq_plugin_handle returned " + std::to_string(code) +
                                ", which is none of EMQ_PLUGIN_OK (0), EMQ_PLUGIN_RETRY (1), EMQ_PLUGIN_PERMANENT (2)";
      spdlog::warn("queue={} job={}: plugin {}: {}", job.queue, job.id, params_.handler.path, error);
      return Outcome::failed(Outcome::Verdict::Retry, error);
    }
  }
  if (answer.null_result) {
    spdlog::warn("queue={} job={}: plugin {} passed a NULL result with a length", job.queue, job.id,
                 params_.handler.path);
    return Outcome::failed(Outcome::Verdict::Retry, "the plugin wrote its result from a NULL pointer");
  }
  if (answer.result_over_limit) {
    return Outcome::failed(Outcome::Verdict::Retry, "the plugin's result exceeded max_output_bytes (" +
                                                        std::to_string(params_.handler.max_output_bytes) + ")");
  }
  Outcome done;
  done.verdict = Outcome::Verdict::Complete;
  done.result = std::move(answer.result);
  return done;
}

void PluginHandler::shutdown() {
  if (state_ == nullptr) return;
  void* state = std::exchange(state_, nullptr);
  try {
    library_->destroy()(state);
  } catch (...) {
    spdlog::warn("queue={}: plugin {}: emq_plugin_destroy threw; ignored", params_.queue, params_.handler.path);
  }
}

std::unique_ptr<Handler> make_plugin_handler(const QueueConfig& queue) {
  return std::make_unique<PluginHandler>(PluginHandler::Params{queue.name, queue.handler});
}

}  // namespace echomq::daemon
