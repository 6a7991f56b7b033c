package dev.modelkeeper.cli;

import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.autoconfigure.AutoConfiguredOpenTelemetrySdk;
import io.opentelemetry.sdk.autoconfigure.spi.ConfigProperties;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * OpenTelemetry tracing from the standard {@code OTEL_*} variables: on when an OTLP endpoint or a
 * traces exporter is named (and {@code OTEL_SDK_DISABLED} is not true), off otherwise. Only traces
 * are exported (metrics stay on {@code /metrics}), over OTLP/HTTP (port 4318) unless {@code
 * OTEL_EXPORTER_OTLP_PROTOCOL} says {@code http/json}; the service is called {@code modelkeeper}
 * unless {@code OTEL_SERVICE_NAME} says otherwise. Not thread-safe; the command uses it once.
 */
final class TracingSetup {

  /** The variables that turn tracing on. */
  static final List<String> SWITCHES =
      List.of(
          "OTEL_EXPORTER_OTLP_ENDPOINT",
          "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
          "OTEL_TRACES_EXPORTER");

  private static final long SHUTDOWN_SECONDS = 10;

  private TracingSetup() {}

  /** Whether {@code env} asks for tracing. */
  static boolean wanted(Map<String, String> env) {
    if ("true".equalsIgnoreCase(env.getOrDefault("OTEL_SDK_DISABLED", "").trim())) {
      return false;
    }
    for (String name : SWITCHES) {
      String value = env.get(name);
      if (value != null && !value.isBlank()) {
        return !name.equals("OTEL_TRACES_EXPORTER")
            || !value.trim().toLowerCase(Locale.ROOT).equals("none");
      }
    }
    return false;
  }

  /**
   * The SDK configured from the process's {@code OTEL_*} variables and system properties.
   *
   * @throws ConfigException naming the variables when they do not make a working exporter
   */
  static OpenTelemetrySdk start(Map<String, String> env) {
    for (String name :
        List.of("OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")) {
      String protocol = env.getOrDefault(name, "").trim();
      if (!protocol.isEmpty() && !protocol.startsWith("http/")) {
        throw new ConfigException(
            "invalid "
                + name
                + "="
                + protocol
                + ": ModelKeeper exports OTLP over HTTP; use http/protobuf (the default, port 4318)"
                + " or http/json",
            null);
      }
    }
    try {
      return AutoConfiguredOpenTelemetrySdk.builder()
          .addPropertiesSupplier(
              () ->
                  Map.of(
                      "otel.service.name", "modelkeeper",
                      "otel.exporter.otlp.protocol", "http/protobuf",
                      "otel.metrics.exporter", "none",
                      "otel.logs.exporter", "none"))
          .addSpanExporterCustomizer(
              (exporter, config) -> new SpanExportReport(exporter, destination(config)))
          .disableShutdownHook() // the server closes it after its last request
          .build()
          .getOpenTelemetrySdk();
    } catch (RuntimeException e) {
      Throwable root = e;
      while (root.getCause() != null) {
        root = root.getCause();
      }
      throw new ConfigException(
          "invalid OTEL_* tracing settings: "
              + (root.getMessage() != null && root != e
                  ? e.getMessage() + ": " + root.getMessage()
                  : e.getMessage())
              + "",
          e);
    }
  }

  /** Where spans go, for messages: the OTLP traces URL, or the exporter's name. */
  static String destination(ConfigProperties config) {
    String exporter = config.getString("otel.traces.exporter", "otlp");
    if (!exporter.equals("otlp")) {
      return "the " + exporter + " exporter";
    }
    String traces = config.getString("otel.exporter.otlp.traces.endpoint");
    if (traces != null) {
      return traces;
    }
    String base = config.getString("otel.exporter.otlp.endpoint", "http://localhost:4318");
    return (base.endsWith("/") ? base : base + "/") + "v1/traces";
  }

  /** Sends what is still buffered and stops, waiting a bounded time. */
  static void close(OpenTelemetrySdk sdk) {
    sdk.shutdown().join(SHUTDOWN_SECONDS, TimeUnit.SECONDS);
  }
}
