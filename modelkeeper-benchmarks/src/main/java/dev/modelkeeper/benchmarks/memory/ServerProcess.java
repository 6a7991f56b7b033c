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
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * One ModelKeeper server jar running as a child process on loopback, its stdout and stderr written
 * to files in a folder of its own: a benchmark repository's server for the memory benchmark, or a
 * jar serving its bundled demo models for the jar comparison ({@link Launch}). Starting waits for
 * {@code Ready.} on stdout; every wait is bounded. Not thread-safe: the harness thread owns it (the
 * RSS sampler only reads {@link #pid}).
 */
public final class ServerProcess implements AutoCloseable {

  /** What the server prints on stdout once it accepts requests. */
  private static final String READY = "Ready.";

  private static final Duration POLL = Duration.ofMillis(50);
  private static final Duration STOP_GRACE = Duration.ofSeconds(20);
  private static final Duration KILL_GRACE = Duration.ofSeconds(10);

  private final Process process;
  private final int port;
  private final Path stdout;
  private final Path stderr;
  private final List<String> command;
  private final Consumer<String> log;

  private ServerProcess(
      Process process,
      int port,
      Path stdout,
      Path stderr,
      List<String> command,
      Consumer<String> log) {
    this.process = process;
    this.port = port;
    this.stdout = stdout;
    this.stderr = stderr;
    this.command = command;
    this.log = log;
  }

  /**
   * How one server is started, apart from its jar, port and logs.
   *
   * @param heap its {@code -Xmx}, e.g. {@code 256m}
   * @param loopbackHost whether {@code --host 127.0.0.1} is passed (else the server's default host)
   * @param repository what {@code --repository} names; empty omits the option, so the server serves
   *     its bundled demo models
   * @param cacheDir what {@code --cache-dir} names; empty gives each server a cache of its own in
   *     its logs folder
   * @param flags further server options, last on the command line
   */
  public record Launch(
      String heap,
      boolean loopbackHost,
      Optional<Path> repository,
      Optional<Path> cacheDir,
      List<String> flags) {

    public Launch {
      flags = List.copyOf(flags);
    }

    /** A server on 127.0.0.1 serving {@code repository} with a cache of its own. */
    static Launch ofRepository(String heap, Path repository, List<String> flags) {
      return new Launch(heap, true, Optional.of(repository), Optional.empty(), flags);
    }

    /**
     * A server of its bundled demo models, as a user would start it: default host, no {@code
     * --repository}, the cache {@code cacheDir}.
     */
    public static Launch ofDemo(String heap, Path cacheDir, List<String> flags) {
      return new Launch(heap, false, Optional.empty(), Optional.of(cacheDir), flags);
    }

    /**
     * The command line run by {@code java} of {@code jar} on {@code port} with cache {@code cache};
     * strings, so a report can show placeholders.
     */
    public List<String> command(String java, String jar, String port, String cache) {
      List<String> c = new ArrayList<>(List.of(java, "-Xmx" + heap, "-jar", jar, "serve"));
      if (loopbackHost) {
        c.add("--host");
        c.add("127.0.0.1");
      }
      c.addAll(List.of("--port", port));
      if (!flags.contains("--grpc-port")) {
        c.addAll(List.of("--grpc-port", "-1")); // off unless the flags give it a port
      }
      repository.ifPresent(r -> c.addAll(List.of("--repository", r.toString())));
      c.add("--cache-dir");
      c.add(cache);
      c.addAll(flags);
      return List.copyOf(c);
    }
  }

  /**
   * Starts a server of {@code jar} on {@code 127.0.0.1} serving {@code repository}, then {@code
   * flags}, with a cache of its own; see {@link #start(Path, Launch, Path, Duration, Consumer)}.
   */
  static ServerProcess start(
      Path jar, String heap, Path repository, List<String> flags, Path logs, Duration timeout)
      throws IOException, InterruptedException {
    return start(jar, Launch.ofRepository(heap, repository, flags), logs, timeout, line -> {});
  }

  /**
   * Starts a server of {@code jar} as {@code launch} says on a free loopback port and waits up to
   * {@code timeout} for it to print {@code Ready.}; its logs go to {@code logs}, and what stopping
   * it has to force goes to {@code log}.
   *
   * @throws IllegalStateException when it exits or stays silent past {@code timeout}; the message
   *     carries the end of its stderr
   */
  public static ServerProcess start(
      Path jar, Launch launch, Path logs, Duration timeout, Consumer<String> log)
      throws IOException, InterruptedException {
    Files.createDirectories(logs);
    int port = freePort();
    Path cache =
        launch.cacheDir().isPresent()
            ? launch.cacheDir().get()
            : Files.createDirectories(logs.resolve("cache"));
    List<String> command =
        launch.command(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            jar.toString(),
            Integer.toString(port),
            cache.toString());
    Path out = logs.resolve("stdout.log");
    Path err = logs.resolve("stderr.log");
    Process p =
        new ProcessBuilder(command)
            .redirectOutput(out.toFile())
            .redirectError(err.toFile())
            .redirectInput(ProcessBuilder.Redirect.from(nullDevice()))
            .start();
    ServerProcess server = new ServerProcess(p, port, out, err, command, log);
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

  public int port() {
    return port;
  }

  public long pid() {
    return process.pid();
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  List<String> commandLine() {
    return command;
  }

  /** Whether its stdout or stderr so far contains {@code text}. */
  public boolean said(String text) throws IOException {
    return read(stdout).contains(text) || read(stderr).contains(text);
  }

  /** The lines of its logs that mention an {@code OutOfMemoryError}, at most ten. */
  List<String> outOfMemoryLines() throws IOException {
    return linesWhere(line -> line.contains("OutOfMemoryError"), 10);
  }

  /**
   * The lines of its stdout, then its stderr, that pass {@code test}, stripped, at most {@code
   * max}.
   */
  public List<String> linesWhere(Predicate<String> test, int max) throws IOException {
    List<String> found = new ArrayList<>();
    for (Path file : List.of(stdout, stderr)) {
      for (String line : read(file).split("\n", -1)) {
        if (test.test(line) && found.size() < max) {
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
   * bounded. The kill, and a process that outlives the kill's grace too (left to the OS), are named
   * in the log given to {@link #start(Path, Launch, Path, Duration, Consumer)}.
   */
  @Override
  public void close() {
    if (!process.isAlive()) {
      return;
    }
    process.destroy();
    try {
      if (!process.waitFor(STOP_GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
        log.accept(
            String.format(
                Locale.ROOT,
                "pid %d ignored SIGTERM for %d s; killing it",
                process.pid(),
                STOP_GRACE.toSeconds()));
        process.destroyForcibly();
        if (!process.waitFor(KILL_GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
          log.accept(
              String.format(Locale.ROOT, "pid %d is still alive after SIGKILL", process.pid()));
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
