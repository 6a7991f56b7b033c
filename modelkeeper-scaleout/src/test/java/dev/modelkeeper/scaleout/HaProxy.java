package dev.modelkeeper.scaleout;

import dev.modelkeeper.testkit.Http;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * An {@code haproxy} process running a configuration file, with its addresses given through the
 * environment ({@code MK_BIND}, {@code MK_STATS}, {@code MK_REPLICA1..3}, as the shipped {@code
 * deploy/haproxy/haproxy.cfg} reads them), and its stats page read as CSV. Thread-safe for its
 * queries; start and stop from one thread.
 */
public final class HaProxy implements AutoCloseable {

  private static final List<Path> BINARIES =
      List.of(
          Path.of("/usr/sbin/haproxy"),
          Path.of("/usr/bin/haproxy"),
          Path.of("/usr/local/sbin/haproxy"));

  private final Process process;
  private final int port;
  private final int statsPort;
  private final Path log;
  private final Http http = new Http(); // control calls; see Http for why a client of our own

  private HaProxy(Process process, int port, int statsPort, Path log) {
    this.process = process;
    this.port = port;
    this.statsPort = statsPort;
    this.log = log;
  }

  /**
   * The haproxy binary, installing Debian's package with apt-get (as root) when it is missing.
   *
   * @throws IllegalStateException when it is missing and cannot be installed
   */
  public static Path ensureInstalled() throws IOException, InterruptedException {
    Path found = find();
    if (found != null) {
      return found;
    }
    StringBuilder output = new StringBuilder();
    int rc = run(List.of("apt-get", "install", "-y", "haproxy"), output);
    if (rc != 0 || find() == null) {
      run(List.of("apt-get", "update"), output);
      rc = run(List.of("apt-get", "install", "-y", "haproxy"), output);
    }
    found = find();
    if (found == null) {
      throw new IllegalStateException(
          "haproxy is not installed and 'apt-get install -y haproxy' failed (exit "
              + rc
              + "); install it as root. apt-get said:\n"
              + output);
    }
    return found;
  }

  private static Path find() {
    for (Path p : BINARIES) {
      if (Files.isExecutable(p)) {
        return p;
      }
    }
    return null;
  }

  private static int run(List<String> command, StringBuilder output)
      throws IOException, InterruptedException {
    Path out = Files.createTempFile("apt-", ".log");
    try {
      Process p =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(out.toFile())
              .start();
      p.getOutputStream().close();
      if (!p.waitFor(5, TimeUnit.MINUTES)) {
        p.destroyForcibly();
        p.waitFor(30, TimeUnit.SECONDS);
        output.append(String.join(" ", command)).append(": timed out after 5 minutes\n");
        return -1;
      }
      String text = Files.readString(out);
      output.append(text, Math.max(0, text.length() - 2000), text.length());
      return p.exitValue();
    } catch (IOException e) {
      output.append(String.join(" ", command)).append(": ").append(e).append('\n');
      return -1;
    } finally {
      Files.deleteIfExists(out);
    }
  }

  /**
   * Checks {@code config} ({@code haproxy -c}) and starts haproxy in the foreground with it,
   * listening on 127.0.0.1:{@code port}, stats on 127.0.0.1:{@code statsPort}, and {@code
   * replicaPorts} as servers r1, r2, ...; waits until the stats page answers.
   */
  public static HaProxy start(
      Path config, int port, int statsPort, List<Integer> replicaPorts, Path log)
      throws IOException, InterruptedException {
    Path binary = ensureInstalled();
    Map<String, String> env = new HashMap<>();
    env.put("MK_BIND", "127.0.0.1:" + port);
    env.put("MK_STATS", "127.0.0.1:" + statsPort);
    for (int i = 0; i < replicaPorts.size(); i++) {
      env.put("MK_REPLICA" + (i + 1), "127.0.0.1:" + replicaPorts.get(i));
    }
    ProcessBuilder check =
        new ProcessBuilder(binary.toString(), "-c", "-f", config.toString())
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
    check.environment().putAll(env);
    Process c = check.start();
    if (!c.waitFor(30, TimeUnit.SECONDS) || c.exitValue() != 0) {
      c.destroyForcibly();
      throw new IllegalStateException(config + " does not pass 'haproxy -c'; see " + log);
    }
    ProcessBuilder pb =
        new ProcessBuilder(binary.toString(), "-db", "-f", config.toString())
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
    pb.environment().putAll(env);
    HaProxy h = new HaProxy(pb.start(), port, statsPort, log);
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (h.http.tryGet(h.statsUrl()) == null) {
      if (!h.process.isAlive() || System.nanoTime() - deadline > 0) {
        h.close();
        throw new IllegalStateException("haproxy did not start; see " + log);
      }
      Thread.sleep(50); // polling another process's listener
    }
    return h;
  }

  /** The URL clients use. */
  public String url() {
    return "http://127.0.0.1:" + port;
  }

  private String statsUrl() {
    return "http://127.0.0.1:" + statsPort + "/stats;csv";
  }

  public Path log() {
    return log;
  }

  /** One server's row of the stats page: column name to value (status, wretr, wredis, ...). */
  public Map<String, String> server(String backend, String server)
      throws IOException, InterruptedException {
    Http.Response a = http.get(statsUrl());
    String[] lines = a.body().split("\n");
    String[] header = lines[0].replaceFirst("^# ", "").split(",", -1);
    for (int i = 1; i < lines.length; i++) {
      String[] f = lines[i].split(",", -1);
      if (f.length > 1 && f[0].equals(backend) && f[1].equals(server)) {
        Map<String, String> row = new HashMap<>();
        for (int j = 0; j < header.length && j < f.length; j++) {
          row.put(header[j], f[j]);
        }
        return row;
      }
    }
    throw new IllegalStateException("no stats row for " + backend + "/" + server);
  }

  /** Waits until the proxy reports {@code server} with {@code status} (e.g. UP, DOWN). */
  public void awaitStatus(String backend, String server, String status, Duration timeout)
      throws IOException, InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    String last = null;
    while (System.nanoTime() - deadline < 0) {
      last = server(backend, server).get("status");
      if (last != null && last.startsWith(status)) {
        return;
      }
      Thread.sleep(50); // polling the proxy's health checks
    }
    throw new IllegalStateException(
        backend + "/" + server + " still " + last + " after " + timeout + ", not " + status);
  }

  @Override
  public void close() {
    if (process.isAlive()) {
      process.destroy();
      try {
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
          process.destroyForcibly();
          process.waitFor(30, TimeUnit.SECONDS);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        process.destroyForcibly();
      }
    }
  }
}
