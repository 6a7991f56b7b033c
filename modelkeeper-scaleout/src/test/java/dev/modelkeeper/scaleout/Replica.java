package dev.modelkeeper.scaleout;

import com.fasterxml.jackson.databind.JsonNode;
import dev.modelkeeper.testkit.Http;
import dev.modelkeeper.testkit.ServerProcess;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
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
  private final Path log;
  private final ServerProcess.Builder builder;
  private final Http http = new Http();
  private volatile ServerProcess process;

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
    this.builder =
        ServerProcess.builder()
            .name(name)
            .jar(jar)
            .jvm("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1")
            .args("--port", Integer.toString(port), "--grpc-port", "-1") // the proxy routes HTTP
            .args(extraArgs)
            .copyTo(log)
            .quiet();
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
  public synchronized void start() {
    if (isAlive()) {
      throw new IllegalStateException(name + " is running");
    }
    process = builder.launch();
  }

  /**
   * Waits until this process printed {@code Ready.}; throws when the wait runs out or it ended
   * (another process holding the port makes it end: its readiness is never taken for ours).
   */
  public void awaitReady(Duration timeout) {
    process.awaitReady(timeout);
  }

  /** SIGKILL, then waits for the process to be gone. */
  public void kill() {
    process.kill();
  }

  /** SIGTERM (a graceful shutdown), then waits up to {@code timeout} for it to exit. */
  public void stop(Duration timeout) {
    ServerProcess p = process;
    if (p != null && p.isAlive()) {
      p.stop(timeout);
    }
  }

  public boolean isAlive() {
    ServerProcess p = process;
    return p != null && p.isAlive();
  }

  /** The models resident (state READY) on this replica, from its registry. */
  public Set<String> residentModels() throws IOException, InterruptedException {
    Http.Response a = http.get(url() + "/model/registry");
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
    Http.Response a = http.get(url() + "/metrics");
    Matcher m = LOADS.matcher(a.body());
    if (a.status() != 200 || !m.find()) {
      throw new IllegalStateException(name + " metrics have no loads counter: " + a.status());
    }
    return (long) Double.parseDouble(m.group(1));
  }

  /** Unloads every model of this replica. */
  public void clear() throws IOException, InterruptedException {
    Http.Response a = http.post(url() + "/model/clear", "");
    if (a.status() != 200) {
      throw new IllegalStateException(name + " clear answered " + a);
    }
  }

  @Override
  public void close() {
    ServerProcess p = process;
    if (p != null) {
      p.kill();
    }
  }
}
