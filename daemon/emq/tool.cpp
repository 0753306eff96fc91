#include "emq/tool.h"

#include <cstdlib>

#include "echomq/errors.h"
#include "echomq/executor.h"

namespace echomq::cli {

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
