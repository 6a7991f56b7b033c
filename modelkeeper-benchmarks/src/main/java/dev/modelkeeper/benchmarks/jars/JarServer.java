package dev.modelkeeper.benchmarks.jars;

import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A packaged server jar serving its bundled demo models as a child process on a loopback port, with
 * the command line a user would type: {@code java -Xmx<heap> -jar <jar> serve --port <port>
 * --grpc-port -1 --cache-dir <dir> --pin <models>}, no {@code --repository}. The memory benchmark's
 * {@code ServerProcess} always passes a repository and a cache of its own, so it cannot start this
 * command; this class can. Its stdout and stderr go to files in a folder of its own. Every wait is
 * bounded. Not thread-safe: the harness thread owns it.
 */
final class JarServer implements AutoCloseable {

  /** What the server prints on stdout once it accepts requests. */
  private static final String READY = "Ready.";

  /** The line that says where it listens; only a loopback address is accepted. */
  private static final Pattern SERVING =
      Pattern.compile("ModelKeeper is serving http://127\\.0\\.0\\.1:(\\d+)");

  private static final Duration POLL = Duration.ofMillis(50);
  private static final Duration STOP_GRACE = Duration.ofSeconds(20);
  private static final Duration KILL_GRACE = Duration.ofSeconds(10);

  private final Process process;
  private final List<String> command;
  private final Path stdout;
  private final Path stderr;
  private int port;

  private JarServer(Process process, List<String> command, Path stdout, Path stderr) {
    this.process = process;
    this.command = command;
    this.stdout = stdout;
    this.stderr = stderr;
  }

  /**
   * The command line of a server run by {@code java} of {@code jar} with heap {@code heap} (e.g.
   * {@code 1g}) on {@code port}, keeping its demo repository in {@code cacheDir}, with {@code pins}
   * pinned.
   */
  static List<String> command(
      String java, String jar, String heap, String port, String cacheDir, List<String> pins) {
    return List.of(
        java,
        "-Xmx" + heap,
        "-jar",
        jar,
        "serve",
        "--port",
        port,
        "--grpc-port",
        "-1",
        "--cache-dir",
        cacheDir,
        "--pin",
        String.join(",", pins));
  }

  /** The command line as the report shows it, with placeholders for the jar, port and cache. */
  static String shown(String heap, List<String> pins) {
    return String.join(" ", command("java", "<jar>", heap, "<free port>", "<shared cache>", pins));
  }

  /**
   * Starts a server of {@code jar} on a free loopback port and waits up to {@code timeout} for it
   * to print {@code Ready.}; its logs go to {@code logs}.
   *
   * @throws IllegalStateException when it exits, stays silent past {@code timeout} or says it
   *     serves anywhere but 127.0.0.1; the message carries the end of its stderr
   */
  static JarServer start(
      Path jar, String heap, Path cacheDir, List<String> pins, Path logs, Duration timeout)
      throws IOException, InterruptedException {
    Files.createDirectories(logs);
    List<String> command =
        command(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            jar.toString(),
            heap,
            Integer.toString(freePort()),
            cacheDir.toString(),
            pins);
    Path out = logs.resolve("stdout.log");
    Path err = logs.resolve("stderr.log");
    Process p =
        new ProcessBuilder(command)
            .redirectOutput(out.toFile())
            .redirectError(err.toFile())
            .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
            .start();
    JarServer server = new JarServer(p, command, out, err);
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!read(out).contains(READY)) {
      if (!p.isAlive()) {
        throw new IllegalStateException(
            "the server exited with status " + p.exitValue() + " before it was ready; " + server);
      }
      if (System.nanoTime() > deadline) {
        server.close();
        throw new IllegalStateException(
            "the server was not ready after " + timeout.toSeconds() + " s; " + server);
      }
      TimeUnit.MILLISECONDS.sleep(POLL.toMillis());
    }
    Matcher m = SERVING.matcher(read(out));
    if (!m.find()) {
      server.close();
      throw new IllegalStateException(
          "the server printed Ready. but no 'ModelKeeper is serving http://127.0.0.1:<port>'; "
              + server);
    }
    server.port = Integer.parseInt(m.group(1));
    return server;
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  /** The loopback port it said it serves on. */
  int port() {
    return port;
  }

  boolean isAlive() {
    return process.isAlive();
  }

  /** The lines of its logs that mention an error or exception, at most {@code max}. */
  List<String> troubleLines(int max) throws IOException {
    List<String> found = new ArrayList<>();
    for (Path log : List.of(stdout, stderr)) {
      for (String line : read(log).split("\n", -1)) {
        if ((line.contains("ERROR") || line.contains("Exception")) && found.size() < max) {
          found.add(line.strip());
        }
      }
    }
    return found;
  }

  private static String read(Path p) throws IOException {
    return Files.exists(p) ? Files.readString(p, StandardCharsets.UTF_8) : "";
  }

  /**
   * Stops it: SIGTERM, then a kill if it has not exited after {@code STOP_GRACE}; both waits
   * bounded. A process that outlives the kill's grace too is left to the OS and named in the log.
   */
  @Override
  public void close() {
    if (!process.isAlive()) {
      return;
    }
    process.destroy();
    try {
      if (!process.waitFor(STOP_GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
        JarThroughputBench.log(
            "pid %d ignored SIGTERM for %d s; killing it", process.pid(), STOP_GRACE.toSeconds());
        process.destroyForcibly();
        if (!process.waitFor(KILL_GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
          JarThroughputBench.log("pid %d is still alive after SIGKILL", process.pid());
        }
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public String toString() {
    String tail;
    try {
      String[] lines = read(stderr).split("\n", -1);
      tail =
          String.join(
              "\n", Arrays.copyOfRange(lines, Math.max(0, lines.length - 15), lines.length));
    } catch (IOException e) {
      tail = "(stderr unreadable: " + e.getMessage() + ")";
    }
    return String.format(
        Locale.ROOT,
        "pid %d, command: %s%nlogs: %s, %s; end of stderr:%n%s",
        process.pid(),
        String.join(" ", command),
        stdout,
        stderr,
        tail);
  }
}
