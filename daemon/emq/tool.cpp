#include "emq/tool.h"

#include <cstdlib>

#include "echomq/executor.h"

namespace echomq::cli {

ConnectionOptions Tool::options() const {
  ConnectionOptions o = parse_url(url);
  if (const char* pw = std::getenv(kPasswordEnv); pw != nullptr && *pw != '\0') o.password = pw;
  // Shows in CLIENT LIST, so an operator can tell the tool from the daemons.
  o.client_name = "emq";
  o.executor = parse_executor_choice(executor).value_or(ExecutorChoice::Auto);  // checked by the parser
  return o;
}

}  // namespace echomq::cli
