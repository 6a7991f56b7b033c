package dev.modelkeeper.interop;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * A real OpenTelemetry Collector (OTLP over HTTP in, the debug exporter out), built once by {@code
 * scripts/otelcol.sh} and started on a free loopback port; what it exports is read from its log.
 * Thread-safe.
 */
final class Collector implements AutoCloseable {

  private static final Duration BUILD_TIMEOUT = Duration.ofMinutes(25);

  private final Process process;
  private final int port;
  private final StringBuilder log = new StringBuilder();

  private Collector(Process process, int port) {
    this.process = process;
    this.port = port;
  }

  /** Builds (once) and starts the collector; its config goes to {@code dir}. */
  static Collector start(Path dir) throws Exception {
    Path script = Path.of(System.getProperty("interop.scripts.dir"), "otelcol.sh");
    Processes.Outcome build = Processes.run(List.of("bash", script.toString()), BUILD_TIMEOUT);
    assertThat(build.exitCode()).as("%s (its output is above)", script).isZero();
    String[] lines = build.output().strip().split("\n");
    Path binary = Path.of(lines[lines.length - 1]);
    assertThat(binary).as("the collector %s built", script).isExecutable();
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    Path config = dir.resolve("otelcol.yaml");
    Files.writeString(
        config,
        String.join(
            "\n",
            "receivers:",
            "  otlp:",
            "    protocols:",
            "      http:",
            "        endpoint: 127.0.0.1:" + port,
            "exporters:",
            "  debug:",
            "    verbosity: detailed",
            "service:",
            "  telemetry:",
            "    metrics:",
            "      level: none",
            "  pipelines:",
            "    traces:",
            "      receivers: [otlp]",
            "      exporters: [debug]",
            ""));
    Process p =
        new ProcessBuilder(binary.toString(), "--config", config.toString())
            .redirectErrorStream(true)
            .start();
    Collector c = new Collector(p, port);
    CountDownLatch ready = new CountDownLatch(1);
    Thread drain = new Thread(() -> c.drain(ready), "collector-log");
    drain.setDaemon(true);
    drain.start();
    if (!ready.await(1, TimeUnit.MINUTES)) {
      c.close();
      throw new AssertionError("the collector did not start within a minute:\n" + c.log());
    }
    return c;
  }

  private void drain(CountDownLatch ready) {
    try (BufferedReader r =
        new BufferedReader(
            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line; (line = r.readLine()) != null; ) {
        synchronized (log) {
          log.append(line).append('\n');
          log.notifyAll();
        }
        if (line.contains("Everything is ready")) {
          ready.countDown();
        }
      }
    } catch (IOException ended) {
      // the collector stopped
    }
  }

  /** The OTLP/HTTP endpoint, for {@code OTEL_EXPORTER_OTLP_ENDPOINT}. */
  String endpoint() {
    return "http://127.0.0.1:" + port;
  }

  /**
   * Waits until what the collector printed satisfies {@code done}, woken by each line it prints,
   * for at most {@code timeout}; returns the output either way.
   */
  String awaitLog(Predicate<String> done, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    synchronized (log) {
      while (!done.test(log.toString())) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          break;
        }
        TimeUnit.NANOSECONDS.timedWait(log, left);
      }
      return log.toString();
    }
  }

  /** Everything the collector printed so far. */
  String log() {
    synchronized (log) {
      return log.toString();
    }
  }

  @Override
  public void close() throws InterruptedException {
    process.destroy();
    if (!process.waitFor(10, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
  }
}
