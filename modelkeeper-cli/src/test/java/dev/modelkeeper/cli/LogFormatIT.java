package dev.modelkeeper.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.modelkeeper.onnx.demo.DemoRepository;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One log stream: the packaged jar, run as {@code serve}, writes the messages of core ({@code
 * System.Logger}), onnx ({@code System.Logger}) and server on stderr in one line format, text or
 * json. The repository is set up so that each library logs once at startup: a model folder with a
 * bad config (onnx warns while listing), a model larger than its config predicts under a tiny byte
 * budget (core warns after loading it), and a preload (the server reports it). Runs after {@code
 * package}, in {@code mvn verify}.
 */
class LogFormatIT {

  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  private static final Pattern TEXT_LINE =
      Pattern.compile(
          "\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}(Z|[+-]\\d\\d:\\d\\d)"
              + " (TRACE|DEBUG|INFO |WARN |ERROR) \\[[^\\]]+\\] (\\S+) - .*");
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

  /** Runs the jar until it is ready, stops it with SIGTERM, and returns its stderr lines. */
  private List<String> serveAndStop(String format) throws Exception {
    Path repo = DemoRepository.materialize(tmp.resolve("repo"));
    Path broken = Files.createDirectories(repo.resolve("broken").resolve("1"));
    Files.copy(repo.resolve("iris/1/model.onnx"), broken.resolve("model.onnx"));
    Files.writeString(broken.resolve("config.json"), "{\"labels\": 3}");
    Files.writeString(repo.resolve("mlp-small/2/config.json"), "{\"expected_size_bytes\": 10}");
    Path out = tmp.resolve("stdout.txt");
    Path err = tmp.resolve("stderr.txt");
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process process =
        new ProcessBuilder(
                java,
                "-jar",
                "modelkeeper-cli/target/modelkeeper.jar",
                "serve",
                "--port",
                "0",
                "--grpc-port",
                "-1",
                "--host",
                "127.0.0.1",
                "--repository",
                repo.toString(),
                "--cache-dir",
                tmp.resolve("cache").toString(),
                "--max-bytes",
                "1000",
                "--preload",
                "mlp-small",
                "--log-format",
                format)
            .directory(ROOT.toFile())
            .redirectOutput(out.toFile())
            .redirectError(err.toFile())
            .start();
    try {
      await()
          .atMost(Duration.ofSeconds(120))
          .until(() -> Files.readString(out).contains("Ready.") || !process.isAlive());
      assertThat(Files.readString(out))
          .as("stdout; stderr %s", Files.readString(err))
          .contains("Ready.");
    } finally {
      process.toHandle().destroy(); // SIGTERM: a graceful stop
      if (!process.waitFor(60, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    }
    List<String> lines = new ArrayList<>();
    for (String line : Files.readAllLines(err, StandardCharsets.UTF_8)) {
      if (!line.isEmpty()) {
        lines.add(line);
      }
    }
    assertThat(lines).as("stderr").isNotEmpty();
    return lines;
  }
}
