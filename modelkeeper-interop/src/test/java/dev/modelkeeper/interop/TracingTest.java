package dev.modelkeeper.interop;

import static org.assertj.core.api.Assertions.assertThat;

import dev.modelkeeper.server.grpc.GRPCInferenceServiceGrpc;
import dev.modelkeeper.server.grpc.InferTensorContents;
import dev.modelkeeper.server.grpc.ModelInferRequest;
import dev.modelkeeper.testkit.ServerProcess;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged server traced into a real OpenTelemetry Collector (built with the collector builder,
 * OTLP receiver and debug exporter) through the standard {@code OTEL_*} variables: a REST and a
 * gRPC inference that carry a W3C {@code traceparent} each produce a server span in the caller's
 * trace, child of the caller's span, with child spans for the queue wait, the model's load, the run
 * and the encoding of the answer, and the model, version, batch size and outcome as attributes.
 */
@Timeout(value = 30, unit = TimeUnit.MINUTES)
class TracingTest {

  private static final String REST_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
  private static final String REST_PARENT = "00f067aa0ba902b7";
  private static final String GRPC_TRACE = "0af7651916cd43dd8448eb211c80319c";
  private static final String GRPC_PARENT = "b7ad6b7169203331";
  private static final Duration EXPORT_WAIT = Duration.ofSeconds(60);

  /** The server span and its four children: queue, load, run, encode. */
  private static final int SPANS_PER_TRACE = 5;

  @TempDir static Path dir;

  private static Collector collector;
  private static ServerProcess server;

  @BeforeAll
  static void start() throws Exception {
    collector = Collector.start(dir);
    server =
        ServerProcess.builder()
            .cacheDir(dir.resolve("cache"))
            .env(
                Map.of(
                    "OTEL_EXPORTER_OTLP_ENDPOINT", collector.endpoint(),
                    "OTEL_SERVICE_NAME", "modelkeeper-tracing-test",
                    "OTEL_BSP_SCHEDULE_DELAY", "100"))
            .start();
  }

  @AfterAll
  static void stop() throws Exception {
    if (server != null) {
      server.close();
    }
    if (collector != null) {
      collector.close();
    }
  }

  /** One span as the debug exporter prints it. */
  record Span(
      String traceId, String parentId, String id, String name, String kind, String attributes) {}

  /** How the last line of a finished export of spans by the debug exporter ends. */
  private static final String EXPORT_END = "\"otelcol.signal\": \"traces\"}";

  private static final Pattern FIELD =
      Pattern.compile("^\\s*(Trace ID|Parent ID|ID|Name|Kind)\\s*:\\s*(.*)$");

  /** Every span in {@code log}, the collector's output. */
  private static List<Span> spans(String log) {
    List<Span> out = new ArrayList<>();
    for (String block : log.split("Span #")) {
      Map<String, String> f = new LinkedHashMap<>();
      StringBuilder attributes = new StringBuilder();
      for (String line : block.split("\n")) {
        Matcher m = FIELD.matcher(line);
        if (m.matches() && !f.containsKey(m.group(1))) {
          f.put(m.group(1), m.group(2).trim());
        } else if (line.contains("-> ")) {
          attributes.append(line.trim()).append('\n');
        }
      }
      if (f.containsKey("Trace ID") && f.containsKey("Name")) {
        out.add(
            new Span(
                f.get("Trace ID"),
                f.getOrDefault("Parent ID", ""),
                f.get("ID"),
                f.get("Name"),
                f.getOrDefault("Kind", ""),
                attributes.toString()));
      }
    }
    return out;
  }

  /**
   * The spans of {@code traceId} in the exports the collector has finished printing: each export is
   * one log entry whose last line carries its fields, ending {@value #EXPORT_END}; a span printed
   * after the last such line may still be missing its attributes.
   */
  private static List<Span> spansOf(String log, String traceId) {
    int end = log.lastIndexOf(EXPORT_END);
    return spans(end < 0 ? "" : log.substring(0, end)).stream()
        .filter(s -> s.traceId().equals(traceId))
        .toList();
  }

  /** The spans of {@code traceId}, once the server span and its children are exported. */
  private static List<Span> trace(String traceId) throws InterruptedException {
    String log =
        collector.awaitLog(l -> spansOf(l, traceId).size() >= SPANS_PER_TRACE, EXPORT_WAIT);
    List<Span> found = spansOf(log, traceId);
    if (found.size() < SPANS_PER_TRACE) {
      throw new AssertionError(
          "trace "
              + traceId
              + " has "
              + found
              + " after "
              + EXPORT_WAIT
              + "; collector log:\n"
              + log);
    }
    return found;
  }

  private static void checkTrace(
      String traceId, String callerSpan, String serverSpanName, String model) throws Exception {
    List<Span> spans = trace(traceId);
    Span root =
        spans.stream()
            .filter(s -> s.parentId().equals(callerSpan))
            .findFirst()
            .orElseThrow(
                () -> new AssertionError("no span with parent " + callerSpan + ": " + spans));
    assertThat(root.name()).isEqualTo(serverSpanName);
    assertThat(root.kind()).containsIgnoringCase("server");
    assertThat(root.attributes())
        .contains("modelkeeper.model: Str(" + model + ")")
        .contains("modelkeeper.model.version: Str(1)")
        .contains("modelkeeper.outcome: Str(ok)");
    Map<String, Span> children = new LinkedHashMap<>();
    for (Span s : spans) {
      if (s.parentId().equals(root.id())) {
        children.put(s.name(), s);
      }
    }
    assertThat(children).containsKeys("queue", "load", "run", "encode");
    assertThat(children.get("run").attributes())
        .contains("modelkeeper.batch.requests: Int(1)")
        .contains("modelkeeper.batch.rows: Int(1)")
        .contains("modelkeeper.outcome: Str(ok)");
  }

  @Test
  void restInference_withTraceparent_continuesTheCallersTrace() throws Exception {
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(
                    URI.create("http://" + server.httpAddress() + "/v2/models/iris/infer"))
                .timeout(Duration.ofSeconds(60))
                .header("traceparent", "00-" + REST_TRACE + "-" + REST_PARENT + "-01")
                .POST(
                    HttpRequest.BodyPublishers.ofString(
                        "{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1,4],"
                            + "\"data\":[5.1,3.5,1.4,0.2]}]}"))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    checkTrace(REST_TRACE, REST_PARENT, "POST /v2/models/{model}/infer", "iris");
  }

  @Test
  void collectorUnreachable_oneWarningLineNamingIt_noStackTrace() throws Exception {
    int closed;
    try (ServerSocket s = new ServerSocket(0)) {
      closed = s.getLocalPort(); // nothing listens there once it is closed
    }
    String endpoint = "http://127.0.0.1:" + closed;
    ServerProcess lonely =
        ServerProcess.builder()
            .cacheDir(dir.resolve("cache-unreachable"))
            .env(Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint, "OTEL_BSP_SCHEDULE_DELAY", "100"))
            .start();
    try {
      HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
      for (int i = 0; i < 3; i++) {
        HttpResponse<String> r =
            http.send(
                HttpRequest.newBuilder(
                        URI.create("http://" + lonely.httpAddress() + "/v2/models/iris/infer"))
                    .timeout(Duration.ofSeconds(60))
                    .POST(
                        HttpRequest.BodyPublishers.ofString(
                            "{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\","
                                + "\"shape\":[1,4],\"data\":[5.1,3.5,1.4,0.2]}]}"))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200); // tracing never fails a request
        if (i == 0) {
          assertThat(lonely.awaitLine(l -> l.contains("tracing: could not send"), EXPORT_WAIT))
              .as("the failed export reported")
              .contains(endpoint + "/v1/traces (connection refused)");
        }
      }
    } finally {
      lonely.stop(
          Duration.ofMinutes(1)); // the last spans fail again at shutdown; all output is in by now
    }
    List<String> log = lonely.output();
    assertThat(log.stream().filter(l -> l.contains("tracing: could not send")))
        .as("one line, not one per batch")
        .hasSize(1);
    assertThat(log)
        .as("no stack trace, no ERROR")
        .noneMatch(
            l -> l.startsWith("\tat ") || l.startsWith("Caused by") || l.contains(" ERROR "));
  }

  @Test
  void grpcInference_withTraceparent_continuesTheCallersTrace() throws Exception {
    String[] hostPort = server.grpcAddress().split(":");
    ManagedChannel channel =
        NettyChannelBuilder.forAddress(hostPort[0], Integer.parseInt(hostPort[1]))
            .usePlaintext()
            .build();
    try {
      Metadata headers = new Metadata();
      headers.put(
          Metadata.Key.of("traceparent", Metadata.ASCII_STRING_MARSHALLER),
          "00-" + GRPC_TRACE + "-" + GRPC_PARENT + "-01");
      InferTensorContents.Builder data = InferTensorContents.newBuilder();
      for (int i = 0; i < 8; i++) {
        data.addFp32Contents(0.5f);
      }
      ModelInferRequest request =
          ModelInferRequest.newBuilder()
              .setModelName("mlp-small")
              .setModelVersion("1")
              .addInputs(
                  ModelInferRequest.InferInputTensor.newBuilder()
                      .setName("input")
                      .setDatatype("FP32")
                      .addShape(1)
                      .addShape(8)
                      .setContents(data))
              .build();
      assertThat(
              GRPCInferenceServiceGrpc.newBlockingStub(channel)
                  .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers))
                  .withDeadlineAfter(60, TimeUnit.SECONDS)
                  .modelInfer(request)
                  .getOutputsCount())
          .isEqualTo(1);
    } finally {
      channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
    }
    checkTrace(GRPC_TRACE, GRPC_PARENT, "inference.GRPCInferenceService/ModelInfer", "mlp-small");
  }
}
