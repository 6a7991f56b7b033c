package dev.modelkeeper.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** When the OTEL_* variables turn tracing on, and which of them are refused before it starts. */
class TracingSetupTest {

  @Test
  void wanted_onlyWhenAnExporterIsNamed_andTheSdkIsNotDisabled() {
    assertThat(TracingSetup.wanted(Map.of())).isFalse();
    assertThat(TracingSetup.wanted(Map.of("OTEL_SERVICE_NAME", "x"))).isFalse();
    assertThat(TracingSetup.wanted(Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318")))
        .isTrue();
    assertThat(TracingSetup.wanted(Map.of("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://c:4318")))
        .isTrue();
    assertThat(TracingSetup.wanted(Map.of("OTEL_TRACES_EXPORTER", "console"))).isTrue();
    assertThat(TracingSetup.wanted(Map.of("OTEL_TRACES_EXPORTER", "none"))).isFalse();
    assertThat(
            TracingSetup.wanted(
                Map.of(
                    "OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318", "OTEL_SDK_DISABLED", "true")))
        .isFalse();
  }

  @Test
  void start_withTheGrpcProtocol_isRefusedNamingTheVariable() {
    assertThatThrownBy(
            () ->
                TracingSetup.start(
                    Map.of(
                        "OTEL_EXPORTER_OTLP_ENDPOINT",
                        "http://c:4317",
                        "OTEL_EXPORTER_OTLP_PROTOCOL",
                        "grpc")))
        .isInstanceOf(ConfigException.class)
        .hasMessageStartingWith("invalid OTEL_EXPORTER_OTLP_PROTOCOL=grpc: ")
        .hasMessageContaining("http/protobuf");
  }
}
