package dev.modelkeeper.interop;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The packaged server ({@code modelkeeper.jar serve}) as a child process on free loopback ports,
 * with its output (the startup summary on stdout and the log on stderr, or stdout alone when the
 * log goes to a file) echoed to the test log and kept for assertions. Thread-safe.
 */
final class ServerProcess implements AutoCloseable {

  private static final Pattern HTTP = Pattern.compile("ModelKeeper is serving http://(\\S+)");
  private static final Pattern GRPC = Pattern.compile("gRPC:\\s+(\\S+)");

  private final Process process;
  private final List<String> log = new ArrayList<>();
  private String httpAddress;
  private String grpcAddress;
  private Thread drainer;

  private ServerProcess(Process process) {
    this.process = process;
  }

  /**
   * Starts the jar with {@code serve}, loopback ports, {@code cacheDir} and {@code args}; returns
   * once it printed {@code Ready.} (at most 2 minutes).
   */
  static ServerProcess start(Path cacheDir, String... args) throws Exception {
    return start(cacheDir, Map.of(), args);
  }

  /** As {@link #start(Path, String...)}, with {@code env} added to the server's environment. */
  static ServerProcess start(Path cacheDir, Map<String, String> env, String... args)
      throws Exception {
    return start(cacheDir, "-Xmx1g", env, null, args);
  }

  /** As {@link #start(Path, Map, String...)}, with the JVM's heap option {@code heap}. */
  static ServerProcess start(Path cacheDir, String heap, Map<String, String> env, String... args)
      throws Exception {
    return start(cacheDir, heap, env, null, args);
  }

  /**
   * As {@link #start(Path, String...)}, with the server's stderr, its log, written to {@code
   * logFile} apart from its stdout.
   */
  static ServerProcess startLoggingTo(Path logFile, Path cacheDir, String... args)
      throws Exception {
    return start(cacheDir, "-Xmx1g", Map.of(), logFile, args);
  }

  /** Starts the server; its stderr goes to {@code logFile}, or with its stdout when null. */
  private static ServerProcess start(
      Path cacheDir, String heap, Map<String, String> env, Path logFile, String... args)
      throws Exception {
    Path jar = Path.of(System.getProperty("modelkeeper.jar"));
    assertThat(jar).as("the packaged server jar (built by modelkeeper-cli)").isRegularFile();
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<String> command =
        new ArrayList<>(
            List.of(
                java,
                heap,
                "-jar",
                jar.toString(),
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--grpc-port",
                "0",
                "--cache-dir",
                cacheDir.toString(),
                "--shutdown-timeout",
                "5s"));
    command.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(command);
    if (logFile == null) {
      pb.redirectErrorStream(true);
    } else {
      pb.redirectError(logFile.toFile());
    }
    pb.environment().putAll(env);
    ServerProcess server = new ServerProcess(pb.start());
    CountDownLatch ready = new CountDownLatch(1);
    Thread drain = new Thread(() -> server.drain(ready), "server-log");
    drain.setDaemon(true);
    server.drainer = drain;
    drain.start();
    assertThat(ready.await(2, TimeUnit.MINUTES)).as("server printed Ready.").isTrue();
    synchronized (server.log) {
      assertThat(server.log).as("the server's output").contains("Ready.");
      assertThat(server.httpAddress).as("printed HTTP address").isNotNull();
      assertThat(server.grpcAddress).as("printed gRPC address").isNotNull();
    }
    return server;
  }

  private void drain(CountDownLatch ready) {
    try (BufferedReader r =
        new BufferedReader(
            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line; (line = r.readLine()) != null; ) {
        System.out.println("[server] " + line);
        synchronized (log) {
          log.add(line);
          log.notifyAll();
          Matcher h = HTTP.matcher(line);
          if (h.find()) {
            httpAddress = h.group(1);
          }
          Matcher g = GRPC.matcher(line);
          if (g.find()) {
            grpcAddress = g.group(1);
          }
        }
        if (line.startsWith("Ready.")) {
          ready.countDown();
        }
      }
    } catch (IOException ignored) {
      // the server ended
    }
    ready.countDown(); // it ended before it was ready: the start fails now, not after the wait
  }

  /** The server's process ID. */
  long pid() {
    return process.pid();
  }

  String httpAddress() {
    synchronized (log) {
      return httpAddress;
    }
  }

  String grpcAddress() {
    synchronized (log) {
      return grpcAddress;
    }
  }

  /**
   * Waits until the server has printed a line that {@code wanted} accepts, at most {@code timeout};
   * woken by each line it prints. Returns the line, or null when none came in time.
   */
  String awaitLine(Predicate<String> wanted, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    synchronized (log) {
      for (int seen = 0; ; ) {
        for (; seen < log.size(); seen++) {
          if (wanted.test(log.get(seen))) {
            return log.get(seen);
          }
        }
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return null;
        }
        TimeUnit.NANOSECONDS.timedWait(log, left);
      }
    }
  }

  /**
   * Stops the server (SIGTERM) and waits for it to exit; its whole output is then in {@link #log}.
   */
  void stopAndWait() throws Exception {
    close();
    drainer.join(TimeUnit.SECONDS.toMillis(30));
  }

  /** The lines the server printed so far. */
  List<String> log() {
    synchronized (log) {
      return List.copyOf(log);
    }
  }

  /**
   * Runs {@code test} (a file of src/test/python) with pytest from the pinned venv, the server's
   * addresses in {@code MK_HTTP} and {@code MK_GRPC} and {@code env} in its environment; at most 5
   * minutes.
   */
  Processes.Outcome pytest(String test, Map<String, String> env) throws Exception {
    Path tests = Path.of(System.getProperty("interop.python.dir"));
    PythonEnv venv = PythonEnv.forRequirements(tests.resolve("requirements.txt"));
    Path report =
        Path.of(System.getProperty("interop.build.dir"), test.replace(".py", "") + "-pytest.xml");
    Files.createDirectories(report.getParent());
    Map<String, String> all = new HashMap<>(env);
    all.put("MK_HTTP", httpAddress());
    all.put("MK_GRPC", grpcAddress());
    all.put("PYTHONDONTWRITEBYTECODE", "1");
    return Processes.run(
        List.of(
            venv.python().toString(),
            "-m",
            "pytest",
            "-v",
            "-p",
            "no:cacheprovider",
            "--junitxml=" + report,
            tests.resolve(test).toString()),
        all,
        Duration.ofMinutes(5));
  }

  @Override
  public void close() throws Exception {
    process.toHandle().destroy();
    if (!process.waitFor(60, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
  }
}
