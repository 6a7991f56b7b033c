package dev.modelkeeper.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.modelkeeper.onnx.demo.DemoRepository;
import dev.modelkeeper.server.support.RawHttp2;
import dev.modelkeeper.testkit.ServerProcess;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * One log stream: the packaged jar, run as {@code serve}, writes the messages of core ({@code
 * System.Logger}), onnx ({@code System.Logger}) and server on stderr in one line format, text or
 * json. The repository is set up so that each library logs once at startup: a model folder with a
 * bad config (onnx warns while listing), and a preloaded model whose file is cut short (core warns
 * that it cannot load it, the server that the preload failed). And the log stays quiet while
 * clients break HTTP/2 on the gRPC port. Runs after {@code package}, in {@code mvn verify}.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class LogFormatIT {

  private static final Pattern TEXT_LINE =
      Pattern.compile(
          "\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}(Z|[+-]\\d\\d:\\d\\d)"
              + " (TRACE|DEBUG|INFO |WARN |ERROR) \\[[^\\]]+\\] (\\S+) - .*");
  private static final Pattern GRPC_PORT = Pattern.compile("gRPC: +127\\.0\\.0\\.1:(\\d+)");
  private static final List<String> LIBRARIES =
      List.of("dev.modelkeeper.core.", "dev.modelkeeper.onnx.", "dev.modelkeeper.server.");

  @TempDir Path tmp;

  @Test
  void jsonFormat_everyLineIsOneJsonObject_fromCoreOnnxAndServer() throws Exception {
    List<String> log = serveAndStop("json");
    ObjectMapper json = new ObjectMapper();
    Set<String> loggers = new TreeSet<>();
    for (String line : log) {
      JsonNode event = json.readTree(line);
      assertThat(event.isObject()).as("a JSON object: %s", line).isTrue();
      assertThat(event.fieldNames())
          .toIterable()
          .as(line)
          .contains("timestamp", "level", "threadName", "loggerName", "formattedMessage");
      loggers.add(event.get("loggerName").asText());
    }
    hasEveryLibrary(loggers, log);
  }

  @Test
  void textFormat_everyLineHasTheSameLayout_fromCoreOnnxAndServer() throws Exception {
    List<String> log = serveAndStop("text");
    Set<String> loggers = new TreeSet<>();
    for (String line : log) {
      Matcher m = TEXT_LINE.matcher(line);
      assertThat(m.matches()).as("text layout: %s", line).isTrue();
      loggers.add(m.group(3));
    }
    hasEveryLibrary(loggers, log);
  }

  private static void hasEveryLibrary(Set<String> loggers, List<String> log) {
    for (String library : LIBRARIES) {
      assertThat(loggers).as("loggers of %s", log).anyMatch(l -> l.startsWith(library));
    }
  }

  @Test
  void brokenHttp2OnTheGrpcPort_isAnsweredOnTheWire_andLogsNothing() throws Exception {
    // before, each broken connection added a WARN and an INFO line with full stack traces,
    // about 7 kB of log for 70 bytes sent
    int[] startupLines = new int[1];
    List<String> log =
        serve(
            List.of("--grpc-port", "0"),
            jar -> {
              Matcher grpc = GRPC_PORT.matcher(jar.stdout());
              assertThat(grpc.find()).as("stdout %s", jar.stdout()).isTrue();
              int port = Integer.parseInt(grpc.group(1));
              startupLines[0] = Files.readAllLines(jar.stderr(), StandardCharsets.UTF_8).size();
              for (int i = 0; i < 20; i++) {
                try (RawHttp2 h2 = RawHttp2.connect(port, Duration.ofSeconds(3))) {
                  // a header name in upper case: a stream error
                  int call =
                      h2.openCall("/inference.GRPCInferenceService/ServerLive", "X-Upper", "v");
                  h2.sendMessage(call, new byte[0]);
                  assertThat(h2.awaitEnd(call) || h2.closedByServer())
                      .as("RST_STREAM or GOAWAY for an upper-case header name")
                      .isTrue();
                }
                try (RawHttp2 h2 = RawHttp2.connect(port, Duration.ofSeconds(3))) {
                  h2.sendMessage(0, new byte[0]); // DATA on stream 0: a connection error
                  assertThat(h2.closedByServer()).as("GOAWAY for DATA on stream 0").isTrue();
                }
              }
              String url = jar.stdout().substring(jar.stdout().indexOf("http://")).split("\\s")[0];
              HttpResponse<String> ready =
                  HttpClient.newHttpClient()
                      .send(
                          HttpRequest.newBuilder(URI.create(url + "/v2/health/ready"))
                              .timeout(Duration.ofSeconds(10))
                              .build(),
                          HttpResponse.BodyHandlers.ofString());
              assertThat(ready.statusCode()).isEqualTo(200);
            });
    // read after the stop, so lines logged a moment late count too
    assertThat(log.subList(Math.min(startupLines[0], log.size()), log.size()))
        .as("log after startup, with 40 broken connections")
        .noneMatch(line -> line.contains("io.grpc") || line.contains("Exception"));
  }

  @Test
  void clientsThatLeave_midRequestOrMidResponse_costOneDebugLineEach() throws Exception {
    // before, a REST client that hung up mid-response cost an ERROR with a stack trace and two WARN
    // lines, and one that hung up mid-body a WARN
    Path config = tmp.resolve("logback-debug.xml");
    Files.writeString(
        config,
        "<configuration>"
            + "<include resource=\"dev/modelkeeper/cli/logback-common.xml\"/>"
            + "<appender name=\"E\" class=\"ch.qos.logback.core.ConsoleAppender\">"
            + "<target>System.err</target><encoder><pattern>%level [%thread] %logger - %msg%n%ex"
            + "</pattern></encoder></appender>"
            + "<logger name=\"dev.modelkeeper\" level=\"DEBUG\"/>"
            + "<root level=\"INFO\"><appender-ref ref=\"E\"/></root></configuration>");
    int[] startupLines = new int[1];
    String[] metrics = new String[1];
    List<String> log =
        serve(
            List.of("-Dlogback.configurationFile=" + config),
            List.of("--grpc-port", "0"),
            jar -> {
              String url = jar.stdout().substring(jar.stdout().indexOf("http://")).split("\\s")[0];
              int port = Integer.parseInt(url.substring(url.lastIndexOf(':') + 1));
              Matcher grpc = GRPC_PORT.matcher(jar.stdout());
              assertThat(grpc.find()).isTrue();
              int grpcPort = Integer.parseInt(grpc.group(1));
              startupLines[0] = Files.readAllLines(jar.stderr(), StandardCharsets.UTF_8).size();
              Disconnects.restMidResponse(port);
              awaitLeaves(jar, startupLines[0], 1);
              Disconnects.restMidRequest(port);
              awaitLeaves(jar, startupLines[0], 2);
              Disconnects.grpcMidRequest(grpcPort);
              awaitLeaves(jar, startupLines[0], 3);
              Disconnects.grpcMidResponse(grpcPort);
              awaitLeaves(jar, startupLines[0], 4);
              metrics[0] =
                  HttpClient.newHttpClient()
                      .send(
                          HttpRequest.newBuilder(URI.create(url + "/metrics"))
                              .timeout(Duration.ofSeconds(10))
                              .build(),
                          HttpResponse.BodyHandlers.ofString())
                      .body();
            });
    List<String> afterStartup = log.subList(Math.min(startupLines[0], log.size()), log.size());
    assertThat(leaves(afterStartup)).as("log after startup: %s", afterStartup).hasSize(4);
    assertThat(afterStartup)
        .as("log after startup")
        .noneMatch(line -> line.startsWith("WARN") || line.startsWith("ERROR"))
        .noneMatch(line -> line.contains("Exception") || line.startsWith("\tat "));
    assertThat(metrics[0]).contains("modelkeeper_grpc_requests_total").doesNotContain("UNKNOWN");
  }

  /** The lines that tell of a client that left. */
  private static List<String> leaves(List<String> lines) {
    return lines.stream()
        .filter(line -> line.startsWith("DEBUG") && line.contains("the client left"))
        .toList();
  }

  /** Waits until the log after startup tells of {@code n} clients that left. */
  private static void awaitLeaves(Running jar, int startupLines, int n) {
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () -> {
              List<String> lines = Files.readAllLines(jar.stderr(), StandardCharsets.UTF_8);
              assertThat(leaves(lines.subList(startupLines, lines.size()))).hasSize(n);
            });
  }

  /** What a test sees of the running jar: its stdout so far and the file its stderr goes to. */
  private record Running(String stdout, Path stderr) {}

  /** Work done while the jar serves. */
  @FunctionalInterface
  private interface WhileServing {
    void run(Running jar) throws Exception;
  }

  /**
   * Runs the jar with a repository set up so that each library logs once at startup, until it is
   * ready, stops it with SIGTERM, and returns its stderr lines.
   */
  private List<String> serveAndStop(String format) throws Exception {
    Path repo = DemoRepository.materialize(tmp.resolve("repo"));
    Path broken = Files.createDirectories(repo.resolve("broken").resolve("1"));
    Files.copy(repo.resolve("iris/1/model.onnx"), broken.resolve("model.onnx"));
    Files.writeString(broken.resolve("config.json"), "{\"labels\": 3}");
    // a model file cut short, preloaded: core warns that it cannot load, the server that the
    // preload failed
    Path corrupt = Files.createDirectories(repo.resolve("corrupt").resolve("1"));
    byte[] iris = Files.readAllBytes(repo.resolve("iris/1/model.onnx"));
    Files.write(corrupt.resolve("model.onnx"), Arrays.copyOf(iris, iris.length / 2));
    List<String> lines =
        serve(
            List.of(
                "--grpc-port",
                "-1",
                "--repository",
                repo.toString(),
                "--preload",
                "corrupt",
                "--log-format",
                format),
            jar ->
                assertThat(jar.stdout())
                    .as("the startup summary flags the broken config")
                    .contains("  broken:      broken/1 (config does not parse"));
    assertThat(lines).as("stderr").isNotEmpty();
    return lines;
  }

  /**
   * Runs {@code serve} on 127.0.0.1 at a free port with {@code args}; once it is ready, runs {@code
   * whileServing}, then stops it with SIGTERM and returns its stderr lines.
   */
  private List<String> serve(List<String> args, WhileServing whileServing) throws Exception {
    return serve(List.of(), args, whileServing);
  }

  /** As {@link #serve(List, WhileServing)}, with {@code jvmArgs} for the jar's JVM. */
  private List<String> serve(List<String> jvmArgs, List<String> args, WhileServing whileServing)
      throws Exception {
    Path err = tmp.resolve("stderr.txt");
    ServerProcess.Builder builder =
        ServerProcess.builder().cacheDir(tmp.resolve("cache")).args(args).stderrTo(err);
    if (!jvmArgs.isEmpty()) {
      builder.jvm(jvmArgs.toArray(String[]::new));
    }
    try (ServerProcess server = builder.start()) {
      whileServing.run(new Running(String.join("\n", server.output()) + "\n", err));
      server.stop(Duration.ofMinutes(1)); // SIGTERM: a graceful stop
    }
    List<String> lines = new ArrayList<>();
    for (String line : Files.readAllLines(err, StandardCharsets.UTF_8)) {
      if (!line.isEmpty()) {
        lines.add(line);
      }
    }
    return lines;
  }
}
