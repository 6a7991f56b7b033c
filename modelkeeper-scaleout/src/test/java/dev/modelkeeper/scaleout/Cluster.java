package dev.modelkeeper.scaleout;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * HAProxy with the shipped configuration in front of three replicas of the packaged jar, all on
 * 127.0.0.1 at free ports, serving a generated repository of small ONNX models from a loopback HTTP
 * server, with one artifact cache folder shared by the replicas. {@link #close()} kills every
 * process it started. Not thread-safe: drive it from one thread (the queries it offers are safe to
 * call while clients run).
 */
public final class Cluster implements AutoCloseable {

  /** The backend name in the shipped configuration. */
  public static final String BACKEND = "replicas";

  /** How requests are spread: the shipped configuration, or variants of it. */
  public enum Routing {
    /** The shipped configuration: consistent hashing by model with bounded load. */
    MODEL_AFFINE("model-affine (consistent hash, hash-balance-factor 150)"),
    /** The same without bounded load: every request goes to the model's owner. */
    MODEL_AFFINE_UNBOUNDED("model-affine without bounded load (hash-balance-factor 0)"),
    /** The same with {@code balance roundrobin}: any replica serves any model. */
    ROUND_ROBIN("round robin");

    private final String label;

    Routing(String label) {
      this.label = label;
    }

    public String label() {
      return label;
    }

    /** The shipped configuration's text, changed for this routing. */
    String config(String shipped) {
      switch (this) {
        case MODEL_AFFINE:
          return shipped;
        case MODEL_AFFINE_UNBOUNDED:
          return replace(shipped, "hash-balance-factor 150", "hash-balance-factor 0");
        case ROUND_ROBIN:
          return replace(shipped, "balance hash var(txn.model)", "balance roundrobin");
        default:
          throw new AssertionError(this);
      }
    }

    private static String replace(String text, String from, String to) {
      if (!text.contains(from)) {
        throw new IllegalStateException("the shipped haproxy.cfg no longer says '" + from + "'");
      }
      return text.replace(from, to);
    }
  }

  private final List<String> models;
  private final RepositoryServer repository;
  private final List<Replica> replicas = new ArrayList<>();
  private final Path work;
  private HaProxy proxy;

  private Cluster(
      Path work,
      List<String> models,
      RepositoryServer repository,
      HaProxy proxy,
      List<Replica> replicas) {
    this.work = work;
    this.models = models;
    this.repository = repository;
    this.proxy = proxy;
    this.replicas.addAll(replicas);
  }

  /**
   * Starts the whole cluster and waits until every replica is ready and the proxy sees it up.
   *
   * @param work an empty folder for the repository, the shared cache and the logs
   * @param modelCount how many models the repository holds
   * @param maxModels each replica's {@code --max-models}
   */
  public static Cluster start(Path work, int modelCount, int maxModels, Routing routing)
      throws IOException, InterruptedException {
    Path root = Project.root();
    Path jar = root.resolve("modelkeeper-cli/target/modelkeeper.jar");
    if (!Files.isRegularFile(jar)) {
      throw new IllegalStateException(
          jar + " is missing: build it with mvn -pl modelkeeper-cli -am package -DskipTests");
    }
    Path repoDir = Files.createDirectories(work.resolve("repository"));
    Path cache = Files.createDirectories(work.resolve("shared-cache"));
    Path logs = Files.createDirectories(work.resolve("logs"));
    List<String> models = GeneratedRepository.write(repoDir, modelCount);
    RepositoryServer repository = new RepositoryServer(repoDir);
    List<Replica> replicas = new ArrayList<>();
    HaProxy proxy = null;
    try {
      List<Integer> ports = new ArrayList<>();
      for (int i = 1; i <= 3; i++) {
        int port = Ports.free();
        ports.add(port);
        replicas.add(
            new Replica(
                "r" + i,
                jar,
                port,
                List.of(
                    "--repository",
                    repository.url(),
                    "--cache-dir",
                    cache.toString(),
                    "--max-models",
                    "" + maxModels,
                    "--shutdown-timeout",
                    "10s"),
                logs));
      }
      for (Replica r : replicas) {
        r.start();
      }
      proxy = startProxy(work, routing, ports);
      Cluster cluster = new Cluster(work, models, repository, proxy, replicas);
      for (Replica r : replicas) {
        cluster.awaitServing(r);
      }
      return cluster;
    } catch (IOException | InterruptedException | RuntimeException | Error e) {
      replicas.forEach(Replica::close);
      if (proxy != null) {
        proxy.close();
      }
      repository.close();
      throw e;
    }
  }

  private static HaProxy startProxy(Path work, Routing routing, List<Integer> replicaPorts)
      throws IOException, InterruptedException {
    Path shipped = Project.root().resolve("deploy/haproxy/haproxy.cfg");
    Path config =
        routing == Routing.MODEL_AFFINE
            ? shipped
            : Files.writeString(
                work.resolve("haproxy-" + routing.name().toLowerCase(Locale.ROOT) + ".cfg"),
                routing.config(Files.readString(shipped)));
    return HaProxy.start(
        config,
        Ports.free(),
        Ports.free(),
        replicaPorts,
        work.resolve("logs").resolve("haproxy.log"));
  }

  /** Replaces the proxy by one with {@code routing}, and waits until it routes to every replica. */
  public void reroute(Routing routing) throws IOException, InterruptedException {
    proxy.close();
    proxy = startProxy(work, routing, replicas.stream().map(Replica::port).toList());
    for (Replica r : replicas) {
      proxy.awaitStatus(BACKEND, r.name(), "UP", Duration.ofSeconds(30));
    }
  }

  /** Waits until {@code r} is ready and the proxy routes to it. */
  public void awaitServing(Replica r) throws IOException, InterruptedException {
    r.awaitReady(Duration.ofSeconds(90));
    proxy.awaitStatus(BACKEND, r.name(), "UP", Duration.ofSeconds(30));
  }

  public List<String> models() {
    return models;
  }

  public List<Replica> replicas() {
    return replicas;
  }

  public HaProxy proxy() {
    return proxy;
  }

  public RepositoryServer repository() {
    return repository;
  }

  /** For each model, the replicas it is resident on (live replicas only). */
  public Map<String, List<String>> residency() throws IOException, InterruptedException {
    Map<String, List<String>> out = new LinkedHashMap<>();
    for (String m : models) {
      out.put(m, new ArrayList<>());
    }
    for (Replica r : replicas) {
      if (!r.isAlive()) {
        continue;
      }
      Set<String> resident = r.residentModels();
      for (String key : resident) {
        String name = key.contains("/") ? key.substring(0, key.indexOf('/')) : key;
        out.computeIfAbsent(name, k -> new ArrayList<>()).add(r.name());
      }
    }
    return out;
  }

  /** Unloads every model on every live replica. */
  public void clearAll() throws IOException, InterruptedException {
    for (Replica r : replicas) {
      if (r.isAlive()) {
        r.clear();
      }
    }
  }

  /** Every process's log, for a failure message. */
  public String logs() {
    StringBuilder b = new StringBuilder();
    for (Replica r : replicas) {
      b.append(r.log()).append('\n');
    }
    return b.append(proxy.log()).toString();
  }

  @Override
  public void close() {
    for (Replica r : replicas) {
      r.close();
    }
    proxy.close();
    repository.close();
  }
}
