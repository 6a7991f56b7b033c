package dev.modelkeeper.benchmarks.memory;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * One ModelKeeper server jar running as a child process on loopback, its stdout and stderr written
 * to files in a folder of its own. Starting waits for {@code Ready.} on stdout; every wait is
 * bounded. Not thread-safe: the harness thread owns it (the RSS sampler only reads {@link #pid}).
 */
final class ServerProcess implements AutoCloseable {

  /** What the server prints on stdout once it accepts requests. */
  private static final String READY = "Ready.";

  private static final Duration POLL = Duration.ofMillis(50);
  private static final Duration STOP_GRACE = Duration.ofSeconds(20);

  private final Process process;
  private final int port;
  private final Path stdout;
  private final Path stderr;
  private final List<String> command;

  private ServerProcess(Process process, int port, Path stdout, Path stderr, List<String> command) {
    this.process = process;
    this.port = port;
    this.stdout = stdout;
    this.stderr = stderr;
    this.command = command;
  }

  /**
   * The command line of a server of {@code jar} with heap {@code heap} (e.g. {@code 256m}) on
   * {@code port}, serving {@code repository}, then {@code flags}.
   */
  static List<String> command(
      Path jar, String heap, int port, Path repository, Path cacheDir, List<String> flags) {
    List<String> c = new ArrayList<>();
    c.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    c.add("-Xmx" + heap);
    c.add("-jar");
    c.add(jar.toString());
    c.add("serve");
    c.add("--host");
    c.add("127.0.0.1");
    c.add("--port");
    c.add(Integer.toString(port));
    c.add("--grpc-port");
    c.add("-1");
    c.add("--repository");
    c.add(repository.toString());
    c.add("--cache-dir");
    c.add(cacheDir.toString());
    c.addAll(flags);
    return List.copyOf(c);
  }

  /**
   * Starts a server of {@code jar} on a free loopback port and waits up to {@code timeout} for it
   * to print {@code Ready.}; its logs go to {@code logs}.
   *
   * @throws IllegalStateException when it exits or stays silent past {@code timeout}; the message
   *     carries the end of its stderr
   */
  static ServerProcess start(
      Path jar, String heap, Path repository, List<String> flags, Path logs, Duration timeout)
      throws IOException, InterruptedException {
    Files.createDirectories(logs);
    int port = freePort();
    List<String> command =
        command(jar, heap, port, repository, Files.createDirectories(logs.resolve("cache")), flags);
    Path out = logs.resolve("stdout.log");
    Path err = logs.resolve("stderr.log");
    Process p =
        new ProcessBuilder(command)
            .redirectOutput(out.toFile())
            .redirectError(err.toFile())
            .redirectInput(ProcessBuilder.Redirect.from(nullDevice()))
            .start();
    ServerProcess server = new ServerProcess(p, port, out, err, command);
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!server.said(READY)) {
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
    return server;
  }

  /**
   * Whether {@code jar}'s {@code serve --help} lists option {@code flag}; runs it as a child for at
   * most a minute.
   */
  static boolean knowsFlag(Path jar, String flag) throws IOException, InterruptedException {
    Process p =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-jar",
                jar.toString(),
                "serve",
                "--help")
            .redirectErrorStream(true)
            .redirectInput(ProcessBuilder.Redirect.from(nullDevice()))
            .start();
    String help = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(1, TimeUnit.MINUTES)) {
      p.destroyForcibly();
      throw new IllegalStateException(jar + " serve --help did not finish within a minute");
    }
    return help.contains(flag + "=") || help.contains(flag + " ");
  }

  private static java.io.File nullDevice() {
    return new java.io.File("/dev/null");
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  int port() {
    return port;
  }

  long pid() {
    return process.pid();
  }

  boolean isAlive() {
    return process.isAlive();
  }

  List<String> commandLine() {
    return command;
  }

  /** Whether its stdout or stderr so far contains {@code text}. */
  boolean said(String text) throws IOException {
    return read(stdout).contains(text) || read(stderr).contains(text);
  }

  /** The lines of its logs that mention an {@code OutOfMemoryError}, at most ten. */
  List<String> outOfMemoryLines() throws IOException {
    List<String> found = new ArrayList<>();
    for (Path log : List.of(stdout, stderr)) {
      for (String line : read(log).split("\n", -1)) {
        if (line.contains("OutOfMemoryError") && found.size() < 10) {
          found.add(line.strip());
        }
      }
    }
    return found;
  }

  /** The last {@code n} lines of its stderr. */
  String stderrTail(int n) throws IOException {
    String[] lines = read(stderr).split("\n", -1);
    return String.join(
        "\n", java.util.Arrays.copyOfRange(lines, Math.max(0, lines.length - n), lines.length));
  }

  private static String read(Path p) throws IOException {
    return Files.exists(p) ? Files.readString(p, StandardCharsets.UTF_8) : "";
  }

  /**
   * Stops it: SIGTERM, then a kill if it has not exited after {@code STOP_GRACE}; both waits
   * bounded.
   */
  @Override
  public void close() {
    if (!process.isAlive()) {
      return;
    }
    process.destroy();
    try {
      if (!process.waitFor(STOP_GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
        process.destroyForcibly();
        process.waitFor(STOP_GRACE.toMillis(), TimeUnit.MILLISECONDS);
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
      tail = stderrTail(15);
    } catch (IOException e) {
      tail = "(stderr unreadable: " + e.getMessage() + ")";
    }
    return String.format(
        Locale.ROOT,
        "pid %d, port %d, command: %s%nlogs: %s, %s; end of stderr:%n%s",
        process.pid(),
        port,
        String.join(" ", command),
        stdout,
        stderr,
        tail);
  }
}
