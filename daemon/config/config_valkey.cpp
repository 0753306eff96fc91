// The valkey block: the url (or embedded), the user and where the password
// comes from, TLS files, and what url: embedded needs of this host.
#include <cstdlib>

#include "config/config_paths.h"
#include "config/config_sections.h"
#include "echomq/errors.h"
#include "echomq/executor.h"
#include "echomq/tls.h"
#include "echomq/url.h"

namespace echomq::daemon {

namespace {

const char* const kEmbeddedHasNoUsers =
    "url: embedded runs a private server with no users or password, reached only by emqd; remove this";

class ValkeyReader {
 public:
  ValkeyReader(ConfigReader& reader, std::string dir) : r_(reader), dir_(std::move(dir)) {}

  void read(const Field& field, Config& config) {
    ValkeyConfig& v = config.valkey;
    Mapping m;
    if (!read_mapping(r_, field, kTop, "valkey", m)) return;
    ConnectionOptions from_url;
    bool url_ok = true;
    if (auto f = m.get("url")) url_ok = read_url(*f, v, from_url);
    if (auto f = m.get("username"); f && r_.string(*f, v.username)) {
      if (!v.username.empty() && !from_url.username.empty()) {
        r_.error(*f, "the url already names a user; give it in one place");
      } else if (!v.username.empty() && v.embedded) {
        r_.error(*f, kEmbeddedHasNoUsers);
      }
    }
    read_plain(r_, m, kTop, "valkey", &config, nullptr);
    if (auto f = m.get("executor")) {
      std::string word;
      if (r_.word(*f, key_spec(kTop, "valkey.executor").words, word)) v.executor = *parse_executor_choice(word);
    }
    if (auto f = m.get("embedded_dir"); f && r_.string(*f, v.embedded_dir) && !v.embedded_dir.empty()) {
      v.embedded_dir = absolute_from(dir_, v.embedded_dir);
    }
    read_password(m, !from_url.password.empty(), v);
    if (v.embedded) check_embedded(m, v);
    if (auto f = m.get("tls")) read_tls(*f, url_ok ? &from_url : nullptr, v);
  }

 private:
  // What url: embedded needs of this host, said by --check-config rather
  // than found at start: a socket path that fits, and valkey-server.
  void check_embedded(const Mapping& m, const ValkeyConfig& v) {
    const Field* url = m.get("url");
    const Field* dir_field = m.get("embedded_dir");
    const std::string dir = v.embedded_dir.empty() ? default_embedded_dir(dir_) : v.embedded_dir;
    const std::string socket = embedded_socket_path(dir);
    if (socket.size() > kMaxSocketPath) {
      r_.error(dir_field != nullptr && !v.embedded_dir.empty() ? *dir_field : *url,
               "the embedded server's socket " + socket + " would be " + std::to_string(socket.size()) +
                   " bytes, over the " + std::to_string(kMaxSocketPath) +
                   " a unix socket path may have: set valkey.embedded_dir to a shorter directory");
    }
    const char* path_env = std::getenv("PATH");
    ProgramLookup found = find_program("valkey-server", dir_, path_env ? path_env : "/bin:/usr/bin");
    if (!found.error.empty()) {
      r_.error(*url, "url: embedded runs valkey-server; " + found.error +
                         ": install it (Debian: apt-get install valkey-server; or scripts/install-deps.sh) or point "
                         "valkey.url at a server");
    }
  }

  // from_url is null when the url is wrong (and reported already).
  void read_tls(const Field& field, const ConnectionOptions* from_url, ValkeyConfig& v) {
    Mapping m;
    if (!read_mapping(r_, field, kTop, "valkey.tls", m)) return;
    if (v.embedded) {
      r_.error(field, "url: embedded is reached over a private unix socket, without TLS; remove this");
      return;
    }
    if (from_url != nullptr && !from_url->tls.enabled) {
      r_.error(field, "TLS needs a valkeys:// or rediss:// url; change the url's scheme, or remove this");
      return;
    }
    TlsOptions& t = v.tls;
    const Field* ca = tls_file(m, "ca_file", t.ca_file);
    const Field* cert = tls_file(m, "cert_file", t.cert_file);
    const Field* key = tls_file(m, "key_file", t.key_file);
    if (auto f = m.get("server_name"); f && r_.string(*f, t.server_name)) {
      // 253: the longest DNS name.
      if (!is_ascii_word(t.server_name, "._:-") || t.server_name.size() > 253) {
        r_.error(*f,
                 "expected the host name or IP address the server's certificate holds (cache.example.com), of at "
                 "most 253 characters");
      }
    }
    if (ca != nullptr) check_file(*ca, check_ca_file(t.ca_file));
    if ((cert == nullptr) != (key == nullptr)) {
      r_.error(cert != nullptr ? *cert : *key,
               "a client certificate needs both cert_file and key_file (its private key)");
      return;
    }
    if (cert != nullptr && check_file(*cert, check_cert_file(t.cert_file))) {
      check_file(*key, check_key_file(t.key_file, t.cert_file));
    }
  }

  // A path under valkey.tls, made absolute; null when absent or "".
  const Field* tls_file(const Mapping& m, const char* name, std::string& path) {
    const Field* f = m.get(name);
    if (f == nullptr || !r_.string(*f, path) || path.empty()) return nullptr;
    path = absolute_from(dir_, path);
    return f;
  }

  bool check_file(const Field& f, const std::string& why) {
    if (!why.empty()) r_.error(f, why);
    return why.empty();
  }

  // False when the url is refused (and reported).
  bool read_url(const Field& f, ValkeyConfig& v, ConnectionOptions& from_url) {
    static const char* kForms =
        "expected valkey://[user[:password]@]host[:port][/db], redis://..., valkeys://... or rediss://... (TLS), "
        "unix:///path/to/socket[?db=N] or embedded";
    if (!r_.string(f, v.url)) return false;
    if (v.url == "embedded") {
      v.embedded = true;
      return true;
    }
    // The URL may hold a password: name no part of it but a plain scheme.
    const std::size_t sep = v.url.find("://");
    // No scheme taken is longer than 16 characters.
    if (sep == std::string::npos || sep > 16 || !is_ascii_word(v.url.substr(0, sep), "+.-") ||
        !is_ascii_letter(v.url[0])) {
      r_.error(f, kForms);
      return false;
    }
    try {
      from_url = parse_url(v.url);
      return true;
    } catch (const Error& e) {
      std::string why = e.what();
      const std::string prefix = e.op() + ": ";
      if (why.rfind(prefix, 0) == 0) why = why.substr(prefix.size());
      r_.error(f, why);
      return false;
    }
  }

  void read_password(const Mapping& m, bool url_has_password, ValkeyConfig& v) {
    const Field* env = m.get("password_env");
    const Field* file = m.get("password_file");
    if (env && !r_.string(*env, v.password_env)) env = nullptr;
    if (file && !r_.string(*file, v.password_file)) file = nullptr;
    if (env && v.password_env.empty()) env = nullptr;
    if (file && v.password_file.empty()) file = nullptr;
    if (env && file) {
      r_.error(*file, "give password_env or password_file, not both");
      return;
    }
    const Field* source = env ? env : file;
    if (source == nullptr) return;
    if (url_has_password) {
      r_.error(*source, "the url already holds a password; give it in one place (better here, out of the url)");
      return;
    }
    if (v.embedded) {
      r_.error(*source, kEmbeddedHasNoUsers);
      return;
    }
    if (env) {
      const char* value = std::getenv(v.password_env.c_str());
      if (value == nullptr) {
        r_.error(*env, "expected the name of a set environment variable, but " + v.password_env +
                           " is not set in emqd's environment");
      } else if (value[0] == '\0') {
        r_.error(*env, "the environment variable " + v.password_env + " is set but empty");
      } else {
        v.password = value;
      }
      return;
    }
    v.password_file = absolute_from(dir_, v.password_file);
    std::string why;
    if (!read_secret_file(v.password_file, v.password, why)) r_.error(*file, why);
  }

  ConfigReader& r_;
  std::string dir_;
};

}  // namespace

std::string default_embedded_dir(const std::string& dir) {
  // systemd's StateDirectory= sets this (a colon-separated list).
  if (const char* state = std::getenv("STATE_DIRECTORY"); state != nullptr && state[0] == '/') {
    std::string first(state);
    return first.substr(0, first.find(':'));
  }
  return absolute_from(dir, "emqd-state");
}

void read_valkey(ConfigReader& r, const std::string& dir, const Field& field, Config& config) {
  ValkeyReader(r, dir).read(field, config);
}

}  // namespace echomq::daemon
