#include "tool.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>

#include "echomq/errors.h"
#include "echomq/events.h"
#include "echomq/executor.h"
#include "echomq/whole_number.h"
#include "output.h"

namespace echomq::cli {

std::string read_stdin(const char* what) {
  if (::isatty(STDIN_FILENO)) say(std::string("reading ") + what + " from stdin; end it with Ctrl-D");
  std::string data;
  char buf[65536];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, stdin)) > 0) data.append(buf, n);
  if (std::ferror(stdin)) throw Error(ErrorKind::Invalid, "input", std::string("cannot read ") + what + " from stdin");
  return data;
}

std::string read_file(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::Invalid, "input", std::string("cannot open ") + what + " " + path);
  std::ostringstream data;
  data << in.rdbuf();
  return data.str();
}

ConnectionOptions Tool::options() const {
  ConnectionOptions o = parse_url(url);
  if (const char* pw = std::getenv(kPasswordEnv); pw != nullptr && *pw != '\0') o.password = pw;
  // Shows in CLIENT LIST, so an operator can tell the tool from the daemons.
  o.client_name = "emq";
  const bool tls_given =
      !tls.ca_file.empty() || !tls.cert_file.empty() || !tls.key_file.empty() || !tls.server_name.empty();
  if (tls_given && !o.tls.enabled) {
    throw Error(ErrorKind::Invalid, "url",
                "--tls-ca, --tls-cert, --tls-key and --tls-server-name (or EMQ_TLS_*) need a valkeys:// or "
                "rediss:// URL");
  }
  if (o.tls.enabled) {
    o.tls = tls;
    o.tls.enabled = true;
  }
  o.executor = executor;
  // Every transition of the tool passes the queue's events stream when
  // the queue keeps events (read from meta once a second at most).
  o.events = std::make_shared<EventsBook>();
  return o;
}

namespace {
// The number read (echomq/whole_number.h), or what is wrong with the text.
template <typename T>
T number_arg(const std::string& option, const std::string& text, std::optional<T> value, bool past_range,
             const std::string& range) {
  if (value) return *value;
  const std::string shown = option + " " + text.substr(0, 40);
  throw CLI::ValidationError(shown + (past_range ? " is out of range: " : " is not ") + range);
}
}  // namespace

CLI::Option* add_number_option(CLI::App* app, const std::string& name, std::int64_t& value,
                               const std::string& description) {
  const std::string range = "a whole number from " + std::to_string(std::numeric_limits<std::int64_t>::min()) + " to " +
                            std::to_string(std::numeric_limits<std::int64_t>::max());
  return app->add_option_function<std::string>(
      name,
      [&value, name, range](const std::string& text) {
        value = number_arg(name, text, whole_number(text), past_whole_number(text), range);
      },
      description);
}

CLI::Option* add_number_option(CLI::App* app, const std::string& name, double& value, const std::string& description) {
  const std::string range = "a finite decimal number";
  return app->add_option_function<std::string>(
      name,
      [&value, name, range](const std::string& text) {
        value = number_arg(name, text, decimal_number(text), past_decimal_number(text), range);
      },
      description);
}

void add_server_options(CLI::App& app, Tool& tool) {
  app.add_option("--url", tool.url, "the server (default " + std::string(kDefaultUrl) + ")")
      ->envname(kUrlEnv)
      ->type_name("URL");
  app.add_option("--tls-ca", tool.tls.ca_file, "CA certificates (PEM) that verify the server; default: the system's")
      ->envname("EMQ_TLS_CA")
      ->type_name("FILE");
  app.add_option("--tls-cert", tool.tls.cert_file, "client certificate (PEM), for a server that asks for one")
      ->envname("EMQ_TLS_CERT")
      ->type_name("FILE");
  app.add_option("--tls-key", tool.tls.key_file, "the client certificate's private key (PEM)")
      ->envname("EMQ_TLS_KEY")
      ->type_name("FILE");
  app.add_option("--tls-server-name", tool.tls.server_name,
                 "the name the server's certificate holds; default: the URL's host")
      ->envname("EMQ_TLS_SERVER_NAME")
      ->type_name("NAME");
  // Parsed once, by lib, which spells the names.
  app.add_option_function<std::string>(
         "--executor", [&tool](const std::string& text) { tool.executor = *parse_executor_choice(text); },
         "how transitions reach the server: auto (the emq module when loaded, else scripts), scripted "
         "or native (default auto)")
      ->envname(kExecutorEnv)
      ->check(CLI::Validator(
          [](std::string& text) {
            return parse_executor_choice(text) ? std::string()
                                               : text.substr(0, 40) + " is not auto, scripted or native";
          },
          // No description: CLI11 prints one after the type, `MODE:MODE`.
          ""))
      ->type_name("MODE");
  tool.tls.settings = {"--tls-ca (or EMQ_TLS_CA)", "--tls-cert (or EMQ_TLS_CERT)", "--tls-key (or EMQ_TLS_KEY)",
                       "--tls-server-name (or EMQ_TLS_SERVER_NAME)"};
}

void add_queue_list_options(CLI::App* sub, std::vector<std::string>& queues, bool& json, const std::string& json_item) {
  sub->add_option("queues", queues, "the queues; default: every queue in {emq}:queues")->type_name("QUEUE...");
  sub->add_flag("--json", json, "print a JSON array, one object per " + json_item);
}

}  // namespace echomq::cli
