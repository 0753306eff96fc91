# OpenTelemetry C++ (Debian bookworm-backports: opentelemetry-cpp-dev,
# libabsl-dev) as one imported target, emq::opentelemetry: the trace SDK and
# its OTLP/HTTP exporter, which is all emqd uses.
#
# Not find_package(opentelemetry-cpp): Debian's package config asks for the
# CMake packages of gRPC and Protobuf, which the trace SDK and the HTTP
# exporter do not need and whose -dev packages are large. The libraries
# themselves name what they link (readelf -d), so the target needs only
# their names, and the two definitions the package was built with:
# HAVE_ABSEIL (nostd::variant is absl's, so the headers need libabsl-dev)
# and the ABI number. It was built without ENABLE_ASYNC_EXPORT, which
# changes OtlpHttpExporterOptions' layout: leave it undefined.
set(EMQ_OTEL_LIBRARIES
  opentelemetry_exporter_otlp_http
  opentelemetry_exporter_otlp_http_client
  opentelemetry_otlp_recordable
  opentelemetry_http_client_curl
  opentelemetry_trace
  opentelemetry_resources
  opentelemetry_common
  absl_bad_variant_access)
set(EMQ_OTEL_FOUND "")
foreach(name IN LISTS EMQ_OTEL_LIBRARIES)
  find_library(EMQ_OTEL_${name} NAMES ${name})
  if(NOT EMQ_OTEL_${name})
    message(FATAL_ERROR "lib${name}.so not found: run scripts/install-deps.sh (it installs opentelemetry-cpp-dev "
                        "from bookworm-backports, and libabsl-dev)")
  endif()
  list(APPEND EMQ_OTEL_FOUND ${EMQ_OTEL_${name}})
endforeach()
find_path(EMQ_OTEL_INCLUDE opentelemetry/sdk/trace/tracer_provider.h)
find_path(EMQ_ABSL_INCLUDE absl/types/variant.h)
if(NOT EMQ_OTEL_INCLUDE OR NOT EMQ_ABSL_INCLUDE)
  message(FATAL_ERROR "the OpenTelemetry or Abseil headers are missing: run scripts/install-deps.sh "
                      "(opentelemetry-cpp-dev, libabsl-dev)")
endif()
add_library(emq_opentelemetry INTERFACE)
target_include_directories(emq_opentelemetry SYSTEM INTERFACE ${EMQ_OTEL_INCLUDE} ${EMQ_ABSL_INCLUDE})
target_compile_definitions(emq_opentelemetry INTERFACE HAVE_ABSEIL OPENTELEMETRY_ABI_VERSION_NO=1)
target_link_libraries(emq_opentelemetry INTERFACE ${EMQ_OTEL_FOUND})
add_library(emq::opentelemetry ALIAS emq_opentelemetry)
