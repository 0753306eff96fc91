// The tracing block (docs/configuration.md, "tracing"): off by default, the
// endpoint checked at load with file, line and key, the OTEL_* variables
// filling what the file leaves out, and the headers read from their file
// but never shown.
#include <gtest/gtest.h>

#include "config_test_support.h"
#include "doc_text.h"

namespace echomq::daemon::test {
namespace {

// The variables a test's own environment might hold, cleared for each test.
class Tracing : public ::testing::Test {
 protected:
  ScopedEnv a_{"OTEL_EXPORTER_OTLP_ENDPOINT", nullptr};
  ScopedEnv b_{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", nullptr};
  ScopedEnv c_{"OTEL_EXPORTER_OTLP_PROTOCOL", nullptr};
  ScopedEnv d_{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", nullptr};
  ScopedEnv e_{"OTEL_TRACES_SAMPLER", nullptr};
  ScopedEnv f_{"OTEL_TRACES_SAMPLER_ARG", nullptr};
  ScopedEnv g_{"OTEL_SERVICE_NAME", nullptr};
  ScopedEnv h_{"OTEL_SDK_DISABLED", nullptr};
  ScopedEnv i_{"OTEL_BSP_MAX_QUEUE_SIZE", nullptr};
  ScopedEnv j_{"OTEL_BSP_SCHEDULE_DELAY", nullptr};
  ScopedEnv k_{"OTEL_BSP_MAX_EXPORT_BATCH_SIZE", nullptr};
  TempDir dir;

  Config load(const std::string& tracing) { return load_config(dir.write("c.yaml", tracing + kOneExecQueue)); }
  std::string file(const std::string& tracing) { return dir.write("c.yaml", tracing + kOneExecQueue); }
};

TEST_F(Tracing, IsOffByDefaultAndSaysSo) {
  const Config c = load("");
  EXPECT_FALSE(c.tracing.enabled);
  EXPECT_NE(describe(c).find("\ntracing         off\n"), std::string::npos) << describe(c);
}

TEST_F(Tracing, TheEndpointIsTheCollectorsBase) {
  EXPECT_EQ(load("tracing: { enabled: true, endpoint: \"http://otel.internal:4318\" }\n").tracing.url,
            "http://otel.internal:4318/v1/traces");
  EXPECT_EQ(load("tracing: { enabled: true, endpoint: \"https://otel.internal/otlp/\" }\n").tracing.url,
            "https://otel.internal/otlp/v1/traces");
  // A URL pasted whole is taken as it is.
  EXPECT_EQ(load("tracing: { enabled: true, endpoint: \"http://[::1]:4318/v1/traces\" }\n").tracing.url,
            "http://[::1]:4318/v1/traces");
  const Config c = load("tracing: { enabled: true }\n");
  EXPECT_EQ(c.tracing.url, "http://localhost:4318/v1/traces");
  EXPECT_EQ(c.tracing.url_from, "the default");
}

TEST_F(Tracing, AMalformedEndpointIsRefusedWithFileLineAndKey) {
  const std::string bad = file("log: { level: info }\ntracing:\n  enabled: true\n  endpoint: otel.internal:4317\n");
  expect_one_error_at(bad, 4, "tracing.endpoint", "expected http://host:port or https://host:port");
  expect_one_error_at(file("tracing:\n  endpoint: \"http://:4318\"\n"), 2, "tracing.endpoint", "the host is missing");
  expect_one_error_at(file("tracing:\n  endpoint: \"http://otel:99999\"\n"), 2, "tracing.endpoint",
                      "the port is not 1..65535");
  expect_one_error_at(file("tracing:\n  endpoint: \"http://otel:4318/v1/traces?x=1\"\n"), 2, "tracing.endpoint",
                      "without spaces, a query or a fragment");
  // Credentials in the URL are refused without being quoted back.
  const std::vector<std::string> errors = load_errors(file("tracing:\n  endpoint: \"https://me:hunter2@otel\"\n"));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("put them in headers_file"), std::string::npos) << errors[0];
  EXPECT_EQ(errors[0].find("hunter2"), std::string::npos) << errors[0];
}

TEST_F(Tracing, TheKeysAreCheckedLikeEveryOther) {
  expect_one_error_at(file("tracing:\n  sample_ratio: 1.5\n"), 2, "tracing.sample_ratio", "expected a number in 0..1");
  expect_one_error_at(file("tracing:\n  enabeld: true\n"), 2, "tracing.enabeld", "did you mean enabled?");
  expect_one_error_at(file("tracing:\n  service_name: \"\"\n"), 2, "tracing.service_name",
                      "expected the service's name");
}

TEST_F(Tracing, TheOtelVariablesFillWhatTheFileLeavesOut) {
  ScopedEnv endpoint("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318");
  ScopedEnv sampler("OTEL_TRACES_SAMPLER", "traceidratio");
  ScopedEnv arg("OTEL_TRACES_SAMPLER_ARG", "0.25");
  ScopedEnv name("OTEL_SERVICE_NAME", "worker-eu");
  ScopedEnv queue("OTEL_BSP_MAX_QUEUE_SIZE", "100");
  Config c = load("tracing: { enabled: true }\n");
  EXPECT_EQ(c.tracing.url, "http://collector:4318/v1/traces");
  EXPECT_EQ(c.tracing.url_from, "OTEL_EXPORTER_OTLP_ENDPOINT");
  EXPECT_DOUBLE_EQ(c.tracing.sample_ratio, 0.25);
  EXPECT_FALSE(c.tracing.parent_based);
  EXPECT_EQ(c.tracing.service_name, "worker-eu");
  EXPECT_EQ(c.tracing.max_queue_size, 100);
  {
    // The signal's own variable is a whole URL, and wins over the general one.
    ScopedEnv traces("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://other:4318/custom");
    EXPECT_EQ(load("tracing: { enabled: true }\n").tracing.url, "http://other:4318/custom");
  }
  // The file wins where both speak.
  c = load("tracing: { enabled: true, endpoint: \"http://file:4318\", sample_ratio: 0.5, service_name: emqd-a }\n");
  EXPECT_EQ(c.tracing.url, "http://file:4318/v1/traces");
  EXPECT_DOUBLE_EQ(c.tracing.sample_ratio, 0.5);
  EXPECT_TRUE(c.tracing.parent_based);
  EXPECT_EQ(c.tracing.service_name, "emqd-a");
}

TEST_F(Tracing, AMalformedVariableIsRefusedNamingIt) {
  ScopedEnv endpoint("OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4317");
  ScopedEnv sampler("OTEL_TRACES_SAMPLER", "sometimes");
  ScopedEnv protocol("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc");
  ScopedEnv batch("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "lots");
  const std::string path = file("tracing:\n  enabled: true\n");
  const std::vector<std::string> errors = load_errors(path);
  ASSERT_EQ(errors.size(), 4u) << joined(errors);
  for (const std::string& e : errors) EXPECT_EQ(e.rfind(path + ":1: tracing: OTEL_", 0), 0u) << e;
  const std::string all = joined(errors);
  EXPECT_NE(all.find("OTEL_EXPORTER_OTLP_ENDPOINT: expected http://host:port"), std::string::npos) << all;
  EXPECT_NE(all.find("OTEL_TRACES_SAMPLER: is \"sometimes\""), std::string::npos) << all;
  EXPECT_NE(all.find("OTEL_EXPORTER_OTLP_PROTOCOL: is \"grpc\", but emqd exports http/protobuf only"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("OTEL_BSP_MAX_EXPORT_BATCH_SIZE: is \"lots\""), std::string::npos) << all;
}

TEST_F(Tracing, VariablesAreNotReadWhileTracingIsOff) {
  ScopedEnv endpoint("OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4317");
  EXPECT_FALSE(load("tracing: { enabled: false }\n").tracing.enabled);
  EXPECT_FALSE(load("").tracing.enabled);
}

TEST_F(Tracing, OtelSdkDisabledTurnsItOff) {
  ScopedEnv off("OTEL_SDK_DISABLED", "true");
  const Config c = load("tracing: { enabled: true }\n");
  EXPECT_FALSE(c.tracing.enabled);
  EXPECT_NE(describe(c).find("\ntracing         off (OTEL_SDK_DISABLED=true)\n"), std::string::npos) << describe(c);
}

TEST_F(Tracing, HeadersComeFromAFileAndAreNeverShown) {
  const char* secret = "Bearer s3cr3t-t0ken";
  dir.write("otlp-headers", std::string("# the vendor's key\nAuthorization: ") + secret + "\nX-Team:  queue \n", 0600);
  const Config c = load("tracing: { enabled: true, headers_file: otlp-headers }\n");
  ASSERT_EQ(c.tracing.headers.size(), 2u);
  EXPECT_EQ(c.tracing.headers[0], (std::pair<std::string, std::string>{"Authorization", secret}));
  EXPECT_EQ(c.tracing.headers[1], (std::pair<std::string, std::string>{"X-Team", "queue"}));
  const std::string text = describe(c);
  EXPECT_EQ(text.find("s3cr3t"), std::string::npos) << text;
  EXPECT_EQ(text.find("Authorization"), std::string::npos) << text;
  EXPECT_NE(text.find("  headers       2 from " + dir.path() + "/otlp-headers (not shown)\n"), std::string::npos)
      << text;

  // A malformed line is named by its number, never quoted.
  dir.write("bad-headers", std::string("Authorization ") + secret + "\n", 0600);
  const std::vector<std::string> errors = load_errors(file("tracing:\n  headers_file: bad-headers\n"));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("bad-headers line 1: expected a header as \"Name: value\""), std::string::npos) << errors[0];
  EXPECT_EQ(errors[0].find("s3cr3t"), std::string::npos) << errors[0];
  expect_one_error_at(file("tracing:\n  headers_file: missing\n"), 2, "tracing.headers_file",
                      "expected a readable file holding the collector's headers");
}

TEST_F(Tracing, CheckConfigShowsWhereEachValueCameFrom) {
  ScopedEnv sampler("OTEL_TRACES_SAMPLER", "parentbased_traceidratio");
  ScopedEnv arg("OTEL_TRACES_SAMPLER_ARG", "0.1");
  const std::string text = describe(load("tracing: { enabled: true, endpoint: \"http://otel:4318\" }\n"));
  EXPECT_NE(text.find("\ntracing         spans over OTLP/HTTP to http://otel:4318/v1/traces (from "
                      "tracing.endpoint), as service emqd\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\n  sampling      a job's sampled context is kept; 0.1 (OTEL_TRACES_SAMPLER) of the traces "
                      "emqd starts\n"),
            std::string::npos)
      << text;
}

TEST_F(Tracing, TheOperationsPagesExampleLoads) {
  const std::string block =
      echomq::test::fenced_block(std::string(EMQ_SOURCE_DIR) + "/docs/operations.md", "## Tracing", "yaml");
  const Config c = load(block);
  EXPECT_TRUE(c.tracing.enabled);
  EXPECT_EQ(c.tracing.url, "http://127.0.0.1:4318/v1/traces");
  EXPECT_DOUBLE_EQ(c.tracing.sample_ratio, 0.1);
}

}  // namespace
}  // namespace echomq::daemon::test
