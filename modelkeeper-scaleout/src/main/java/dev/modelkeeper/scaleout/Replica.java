package dev.modelkeeper.scaleout;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
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

/**
 * One {@code modelkeeper serve} process of the packaged jar on 127.0.0.1, restartable on the same
 * port. Thread-safe for its queries; start and stop from one thread.
 */
public final class Replica implements AutoCloseable {

  private static final Pattern LOADS =
      Pattern.compile("(?m)^modelkeeper_model_loads_total(?:\\{[^}]*})? ([0-9.eE+]+)$");

  private final String name;
  private final int port;
  private final List<String> command;
  private final Path log;
  private final Http http = new Http(); // control calls; see Http for why a client of our own
  private volatile Process process;
  private volatile long logStart; // where this start's output begins in the appended log

  /**
   * A replica (not started).
   *
   * @param name its server name in the proxy, e.g. {@code r1}
   * @param jar the packaged cli jar
   * @param extraArgs further {@code serve} flags (repository, cache, budget)
   * @param logDir where {@code <name>.log} collects its output
   */
  public Replica(String name, Path jar, int port, List<String> extraArgs, Path logDir) {
    this.name = name;
    this.port = port;
    this.log = logDir.resolve(name + ".log");
    List<String> c = new ArrayList<>();
    c.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    c.addAll(List.of("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"));
    c.addAll(List.of("-jar", jar.toString(), "serve", "--host", "127.0.0.1", "--port", "" + port));
    c.addAll(List.of("--grpc-port", "-1")); // the proxy routes HTTP only
    c.addAll(extraArgs);
    this.command = List.copyOf(c);
  }

  public String name() {
    return name;
  }

  public int port() {
    return port;
  }

  public String url() {
    return "http://127.0.0.1:" + port;
  }

  public Path log() {
    return log;
  }

  /** Starts the process (its output appended to its log); does not wait for readiness. */
  public synchronized void start() throws IOException {
    if (process != null && process.isAlive()) {
      throw new IllegalStateException(name + " is running");
    }
    logStart = Files.exists(log) ? Files.size(log) : 0;
    process =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
            .start();
  }

  /**
   * Waits until this process has said it serves its port and {@code /v2/health/ready} answers 200;
   * throws when the wait runs out or it died. Readiness alone is not enough: another process on the
   * same port would answer it too.
   */
  public void awaitReady(Duration timeout) throws InterruptedException, IOException {
    long deadline = System.nanoTime() + timeout.toNanos();
    String serving = "ModelKeeper is serving " + url();
    while (System.nanoTime() - deadline < 0) {
      Process p = process;
      if (p == null || !p.isAlive()) {
        throw new IllegalStateException(
            name + " exited before it was ready; its output:\n" + output());
      }
      if (output().contains(serving)) {
        Http.Answer a = http.tryGet(url() + "/v2/health/ready");
        if (a != null && a.status() == 200) {
          return;
        }
      }
      Thread.sleep(100); // polling another process's readiness
    }
    throw new IllegalStateException(name + " not ready within " + timeout + "; see " + log);
  }

  /** What the process wrote since its last start. */
  String output() throws IOException {
    if (!Files.exists(log)) {
      return "";
    }
    byte[] all = Files.readAllBytes(log);
    int from = (int) Math.min(logStart, all.length);
    return new String(all, from, all.length - from, StandardCharsets.UTF_8);
  }

  /** SIGKILL, then waits for the process to be gone. */
  public void kill() throws InterruptedException {
    Process p = process;
    p.destroyForcibly();
    if (!p.waitFor(30, TimeUnit.SECONDS)) {
      throw new IllegalStateException(name + " survived SIGKILL for 30 s");
    }
  }

  /** SIGTERM (a graceful shutdown), then waits up to {@code timeout} for it to exit. */
  public void stop(Duration timeout) throws InterruptedException {
    Process p = process;
    if (p == null || !p.isAlive()) {
      return;
    }
    p.destroy();
    if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      p.destroyForcibly();
      p.waitFor(30, TimeUnit.SECONDS);
      throw new IllegalStateException(name + " did not stop within " + timeout + "; killed");
    }
  }

  public boolean isAlive() {
    Process p = process;
    return p != null && p.isAlive();
  }

  /** The models resident (state READY) on this replica, from its registry. */
  public Set<String> residentModels() throws IOException, InterruptedException {
    Http.Answer a = http.get(url() + "/model/registry");
    if (a.status() != 200) {
      throw new IllegalStateException(name + " registry answered " + a);
    }
    Set<String> out = new TreeSet<>();
    for (JsonNode row : a.json().get("models")) {
      if (row.get("state").asText().equals("READY")) {
        out.add(row.get("model_id").asText());
      }
    }
    return out;
  }

  /** Models this process has loaded since it started, from its metrics. */
  public long loads() throws IOException, InterruptedException {
    Http.Answer a = http.get(url() + "/metrics");
    Matcher m = LOADS.matcher(a.body());
    if (a.status() != 200 || !m.find()) {
      throw new IllegalStateException(name + " metrics have no loads counter: " + a.status());
    }
    return (long) Double.parseDouble(m.group(1));
  }

  /** Unloads every model of this replica. */
  public void clear() throws IOException, InterruptedException {
    Http.Answer a = http.post(url() + "/model/clear", "");
    if (a.status() != 200) {
      throw new IllegalStateException(name + " clear answered " + a);
    }
  }

  @Override
  public void close() {
    Process p = process;
    if (p != null && p.isAlive()) {
      p.destroyForcibly();
      try {
        p.waitFor(30, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
