package dev.modelkeeper.testkit;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The packaged server ({@code modelkeeper.jar serve}) as a child process: started, read until it
 * prints {@code Ready.}, its addresses taken from its startup summary, stopped with SIGTERM. Its
 * stdout (and its stderr, unless {@link Builder#stderrTo} parts them) is kept for assertions,
 * echoed to the test's output and, with {@link Builder#copyTo}, appended to a file. Every wait is
 * bounded. Thread-safe for its queries; start and stop from one thread.
 */
public final class ServerProcess implements AutoCloseable {

  /** How long a start may take to print {@code Ready.} unless {@link Builder#readyTimeout} says. */
  public static final Duration READY_TIMEOUT = Duration.ofMinutes(2);

  private static final Pattern HTTP = Pattern.compile("ModelKeeper is serving http://(\\S+)");
  private static final Pattern GRPC = Pattern.compile("gRPC:\\s+(\\S+)");
  private static final Pattern METRICS = Pattern.compile("metrics:\\s+(http://\\S+)");

  private final Process process;
  private final String name;
  private final List<String> output = new ArrayList<>(); // guarded by itself
  private final Thread reader;
  private String httpAddress; // guarded by output
  private String grpcAddress; // guarded by output
  private String metricsUrl; // guarded by output
  private boolean ended; // guarded by output

  private ServerProcess(Process process, String name, Path copy, boolean echo) {
    this.process = process;
    this.name = name;
    this.reader = new Thread(() -> read(copy, echo), name + "-output");
    reader.setDaemon(true);
    reader.start();
  }

  /**
   * A server of the packaged jar ({@link #jar()}) on 127.0.0.1, HTTP, gRPC and metrics on free
   * ports, with a 1 GiB heap and a 5 s shutdown; change any of it on the builder.
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * The packaged jar: the {@code modelkeeper.jar} system property, else {@code
   * modelkeeper-cli/target/modelkeeper.jar} of the project the test runs in.
   */
  public static Path jar() {
    String set = System.getProperty("modelkeeper.jar");
    Path jar =
        set != null
            ? Path.of(set)
            : projectRoot().resolve("modelkeeper-cli").resolve("target").resolve("modelkeeper.jar");
    if (!Files.isRegularFile(jar)) {
      throw new IllegalStateException(
          "no packaged server at " + jar + "; build it first with ./mvnw -B package -DskipTests");
    }
    return jar.toAbsolutePath();
  }

  /** The project's root folder: the nearest folder up from here with {@code mvnw} in it. */
  public static Path projectRoot() {
    for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
      if (Files.isRegularFile(p.resolve("mvnw"))) {
        return p;
      }
    }
    throw new IllegalStateException("not inside the project: no mvnw above " + Path.of(""));
  }

  /** How to start a server. Not thread-safe. */
  public static final class Builder {
    private String name = "server";
    private List<String> jvm = new ArrayList<>(List.of("-Xmx1g"));
    private List<String> command;
    private Path jar;
    private final Map<String, String> serve = new LinkedHashMap<>();
    private final Map<String, String> env = new HashMap<>();
    private Path directory;
    private Path stderr;
    private Path copy;
    private boolean echo = true;
    private Duration readyTimeout = READY_TIMEOUT;

    private Builder() {
      args("--host", "127.0.0.1", "--port", "0", "--grpc-port", "0", "--shutdown-timeout", "5s");
      // Triton's metrics port on a free port too; a variable, which jars without the flag ignore
      env.put("MODELKEEPER_METRICS_PORT", "0");
    }

    /** What its output lines are prefixed with on the test's output, and its threads named. */
    public Builder name(String name) {
      this.name = name;
      return this;
    }

    /** The JVM's options instead of {@code -Xmx1g}. */
    public Builder jvm(String... options) {
      this.jvm = new ArrayList<>(List.of(options));
      return this;
    }

    /**
     * Further {@code serve} flags, each {@code --flag value}; a flag given again replaces its value
     * (the defaults' too), since {@code serve} takes each flag once.
     */
    public Builder args(String... args) {
      return args(List.of(args));
    }

    /** As {@link #args(String...)}. */
    public Builder args(List<String> args) {
      for (int i = 0; i < args.size(); i++) {
        String flag = args.get(i);
        if (!flag.startsWith("--")) {
          throw new IllegalArgumentException("not a flag: " + flag + " in " + args);
        }
        boolean valued = i + 1 < args.size() && !args.get(i + 1).startsWith("--");
        serve.put(flag, valued ? args.get(++i) : "");
      }
      return this;
    }

    /** Downloaded models and the demo repository in {@code folder} ({@code --cache-dir}). */
    public Builder cacheDir(Path folder) {
      return args("--cache-dir", folder.toString());
    }

    /** Runs {@code jar} instead of {@link ServerProcess#jar()}. */
    public Builder jar(Path jar) {
      this.jar = jar;
      return this;
    }

    /** Runs {@code command} as it is instead of the jar with the flags above. */
    public Builder command(List<String> command) {
      this.command = List.copyOf(command);
      return this;
    }

    /** Adds {@code env} to the server's environment. */
    public Builder env(Map<String, String> env) {
      this.env.putAll(env);
      return this;
    }

    /** Runs it in {@code folder} instead of the test's working folder. */
    public Builder directory(Path folder) {
      this.directory = folder;
      return this;
    }

    /** Writes its stderr (its log) to {@code file} instead of among its stdout lines. */
    public Builder stderrTo(Path file) {
      this.stderr = file;
      return this;
    }

    /** Also appends every line it prints to {@code file}. */
    public Builder copyTo(Path file) {
      this.copy = file;
      return this;
    }

    /** Does not echo its output to the test's output. */
    public Builder quiet() {
      this.echo = false;
      return this;
    }

    public Builder readyTimeout(Duration timeout) {
      this.readyTimeout = timeout;
      return this;
    }

    /** Starts it and returns once it printed {@code Ready.}; fails when it ends or is late. */
    public ServerProcess start() {
      ServerProcess server = launch();
      try {
        server.awaitReady(readyTimeout);
        return server;
      } catch (RuntimeException | Error e) {
        server.close();
        throw e;
      }
    }

    /** Starts it and returns at once; {@link ServerProcess#awaitReady} waits for it. */
    public ServerProcess launch() {
      List<String> line = command != null ? command : jarCommand();
      ProcessBuilder pb = new ProcessBuilder(line);
      if (directory != null) {
        pb.directory(directory.toFile());
      }
      if (stderr == null) {
        pb.redirectErrorStream(true);
      } else {
        pb.redirectError(stderr.toFile());
      }
      pb.environment().putAll(env);
      try {
        return new ServerProcess(pb.start(), name, copy, echo);
      } catch (IOException e) {
        throw new UncheckedIOException("cannot start " + line, e);
      }
    }

    private List<String> jarCommand() {
      List<String> line = new ArrayList<>();
      line.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
      line.addAll(jvm);
      line.addAll(List.of("-jar", (jar != null ? jar : ServerProcess.jar()).toString(), "serve"));
      serve.forEach(
          (flag, value) -> {
            line.add(flag);
            if (!value.isEmpty()) {
              line.add(value);
            }
          });
      return line;
    }
  }

  private void read(Path copy, boolean echo) {
    try (BufferedReader r =
            new BufferedReader(
                new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        Writer file =
            copy == null
                ? Writer.nullWriter()
                : Files.newBufferedWriter(
                    copy, StandardOpenOption.CREATE, StandardOpenOption.APPEND)) {
      for (String line; (line = r.readLine()) != null; ) {
        if (echo) {
          System.out.println("[" + name + "] " + line);
        }
        file.write(line + "\n");
        file.flush();
        synchronized (output) {
          output.add(line);
          Matcher h = HTTP.matcher(line);
          if (h.find()) {
            httpAddress = h.group(1);
          }
          Matcher g = GRPC.matcher(line);
          if (g.find()) {
            grpcAddress = g.group(1);
          }
          Matcher m = METRICS.matcher(line);
          if (m.find()) {
            metricsUrl = m.group(1);
          }
          output.notifyAll();
        }
      }
    } catch (IOException ended) {
      // the process ended
    } finally {
      synchronized (output) {
        ended = true;
        output.notifyAll();
      }
    }
  }

  /**
   * Waits until it printed {@code Ready.}; throws, with its output, when it ended before or {@code
   * timeout} ran out.
   */
  public void awaitReady(Duration timeout) {
    if (awaitLine(line -> line.startsWith("Ready."), timeout) == null) {
      throw new IllegalStateException(
          name
              + (isAlive() ? " not ready within " + timeout : " ended before it was ready")
              + "; its output:\n"
              + String.join("\n", output()));
    }
  }

  /**
   * Waits until it printed a line that {@code wanted} accepts, at most {@code timeout}; returns the
   * line, or null when none came in time or it ended first.
   */
  public String awaitLine(Predicate<String> wanted, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    synchronized (output) {
      for (int seen = 0; ; ) {
        for (; seen < output.size(); seen++) {
          if (wanted.test(output.get(seen))) {
            return output.get(seen);
          }
        }
        long left = deadline - System.nanoTime();
        if (left <= 0 || ended) {
          return null;
        }
        try {
          TimeUnit.NANOSECONDS.timedWait(output, left);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return null;
        }
      }
    }
  }

  /** The lines it printed so far. */
  public List<String> output() {
    synchronized (output) {
      return List.copyOf(output);
    }
  }

  /** {@code host:port} of its HTTP endpoint, from its startup summary. */
  public String httpAddress() {
    synchronized (output) {
      if (httpAddress == null) {
        throw new IllegalStateException(name + " printed no HTTP address");
      }
      return httpAddress;
    }
  }

  /** {@code host:port} of its gRPC endpoint, or null when it serves no gRPC. */
  public String grpcAddress() {
    synchronized (output) {
      return grpcAddress;
    }
  }

  /**
   * The URL of its metrics endpoint ({@code http://host:port/metrics}), or null when it has none.
   */
  public String metricsUrl() {
    synchronized (output) {
      return metricsUrl;
    }
  }

  /** {@code http://host:port}. */
  public String url() {
    return "http://" + httpAddress();
  }

  public int port() {
    String a = httpAddress();
    return Integer.parseInt(a.substring(a.lastIndexOf(':') + 1));
  }

  public long pid() {
    return process.pid();
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  /**
   * SIGTERM, a graceful stop; waits up to {@code timeout} for it to end, then kills it and throws.
   * Its whole output is in {@link #output()} on return.
   */
  public void stop(Duration timeout) {
    process.toHandle().destroy(); // Process.destroy() would also close the pipes we read
    try {
      if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        kill();
        throw new IllegalStateException(name + " did not stop within " + timeout + "; killed");
      }
      reader.join(TimeUnit.SECONDS.toMillis(30));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      kill();
    }
  }

  /** SIGKILL; waits up to 30 s for it to be gone. */
  public void kill() {
    process.destroyForcibly();
    try {
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        throw new IllegalStateException(name + " survived SIGKILL for 30 s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Stops it gracefully within a minute, else kills it; never throws. */
  @Override
  public void close() {
    if (!process.isAlive()) {
      return;
    }
    try {
      stop(Duration.ofMinutes(1));
    } catch (IllegalStateException killed) {
      // it is gone now; the test's own assertions say what went wrong
    }
  }
}
