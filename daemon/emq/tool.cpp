#include "emq/tool.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "echomq/errors.h"
#include "echomq/executor.h"
#include "emq/output.h"

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
  const bool tls_given = !tls.ca_file.empty() || !tls.cert_file.empty() || !tls.key_file.empty() ||
                         !tls.server_name.empty();
  if (tls_given && !o.tls.enabled) {
    throw Error(ErrorKind::Invalid, "url",
                "--tls-ca, --tls-cert, --tls-key and --tls-server-name (or EMQ_TLS_*) need a valkeys:// or "
                "rediss:// URL");
  }
  if (o.tls.enabled) {
    o.tls = tls;
    o.tls.enabled = true;
  }
  o.executor = parse_executor_choice(executor).value_or(ExecutorChoice::Auto);  // checked by the parser
  return o;
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
  app.add_option("--executor", tool.executor,
                 "how transitions reach the server: auto (the emq module when loaded, else scripts), scripted "
                 "or native (default auto)")
      ->envname(kExecutorEnv)
      ->check(CLI::IsMember({"auto", "scripted", "native"}))
      ->type_name("MODE");
  tool.tls.settings = {"--tls-ca (or EMQ_TLS_CA)", "--tls-cert (or EMQ_TLS_CERT)", "--tls-key (or EMQ_TLS_KEY)",
                       "--tls-server-name (or EMQ_TLS_SERVER_NAME)"};
}

}  // namespace echomq::cli
