#include "echomq/keyspace.h"

#include "echomq/errors.h"
#include "echomq/job_id.h"

namespace echomq {

namespace {
bool name_byte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
}
}  // namespace

std::string queue_key(std::string_view queue, std::string_view type) {
  std::string key;
  key.reserve(6 + queue.size() + type.size());
  key.append("emq:{").append(queue).append("}:").append(type);
  return key;
}

std::string_view queue_of_key(std::string_view key) {
  constexpr std::string_view open = "emq:{";
  if (key.substr(0, open.size()) != open) return {};
  const std::size_t close = key.find('}', open.size());
  if (close == std::string_view::npos) return {};
  return key.substr(open.size(), close - open.size());
}

bool valid_queue_name(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (unsigned char c : name) {
    if (!name_byte(c)) return false;
  }
  return true;
}

void check_queue_name(std::string_view name) {
  if (valid_queue_name(name)) return;
  throw Error(
      ErrorKind::Invalid, "queue name",
      "'" + std::string(name.substr(0, 80)) + "' is not a valid queue name: use 1-64 bytes of A-Z a-z 0-9 _ . -");
}

QueueKeys::QueueKeys(std::string_view q)
    : queue((check_queue_name(q), std::string(q))),
      pending(queue_key(q, "pending")),
      active(queue_key(q, "active")),
      delayed(queue_key(q, "delayed")),
      dead(queue_key(q, "dead")),
      stats(queue_key(q, "stats")),
      meta(queue_key(q, "meta")),
      row_root(queue_key(q, "job:")),
      cron(queue_key(q, "cron")),
      schedules(queue_key(q, "schedules")),
      waiting(queue_key(q, "waiting")),
      outbox(queue_key(q, "outbox")),
      deps_root(queue_key(q, "deps:")),
      results_root(queue_key(q, "results:")),
      events(queue_key(q, "events")),
      uniq_root(queue_key(q, "uniq:")),
      gq_root(queue_key(q, "gq:")),
      grp_root(queue_key(q, "grp:")),
      gact_root(queue_key(q, "gact:")),
      gidx(queue_key(q, "gidx")),
      rot(queue_key(q, "rot")),
      groups(queue_key(q, "groups")),
      gwait(queue_key(q, "gwait")) {}

bool valid_unique_key(std::string_view key) {
  if (key.empty() || key.size() > 128) return false;
  for (unsigned char c : key) {
    if (!name_byte(c) && c != ':') return false;
  }
  return true;
}

void check_unique_key(std::string_view key) {
  if (valid_unique_key(key)) return;
  throw Error(ErrorKind::Invalid, "unique key",
              "'" + std::string(key.substr(0, 80)) +
                  "' is not a valid unique key: use 1-128 bytes of A-Z a-z 0-9 _ . : - (hash anything longer)");
}

std::string QueueKeys::uniq(std::string_view key) const {
  check_unique_key(key);
  return uniq_root + std::string(key);
}

// A group is spelt as a unique key is: the same alphabet, the same bound.
bool valid_group_name(std::string_view name) { return valid_unique_key(name); }

void check_group_name(std::string_view name) {
  if (valid_group_name(name)) return;
  throw Error(ErrorKind::Invalid, "group",
              "'" + std::string(name.substr(0, 80)) + "' is not a valid group: use 1-128 bytes of A-Z a-z 0-9 _ . : -");
}

void QueueKeys::add_group_block(std::vector<std::string>& keys) const {
  keys.insert(keys.end(), {gq_root, grp_root, gact_root, gidx, rot, groups, gwait});
}

std::string QueueKeys::gq(std::string_view group) const {
  return (check_group_name(group), gq_root + std::string(group));
}
std::string QueueKeys::grp(std::string_view group) const {
  return (check_group_name(group), grp_root + std::string(group));
}
std::string QueueKeys::gact(std::string_view group) const {
  return (check_group_name(group), gact_root + std::string(group));
}

namespace {
std::string under(const std::string& root, std::string_view job_id) {
  check_wire_gate(job_id);
  std::string key;
  key.reserve(root.size() + job_id.size());
  key.append(root).append(job_id);
  return key;
}
}  // namespace

std::string QueueKeys::row(std::string_view job_id) const { return under(row_root, job_id); }
std::string QueueKeys::deps(std::string_view job_id) const { return under(deps_root, job_id); }
std::string QueueKeys::results(std::string_view job_id) const { return under(results_root, job_id); }

std::string QueueKeys::ref(std::string_view job_id) const {
  check_wire_gate(job_id);
  return queue + ":" + std::string(job_id);
}

}  // namespace echomq
