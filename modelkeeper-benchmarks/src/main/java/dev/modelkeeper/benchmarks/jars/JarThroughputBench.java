package dev.modelkeeper.benchmarks.jars;

import dev.modelkeeper.benchmarks.BlockingHttpClient;
import dev.modelkeeper.benchmarks.memory.ClosedLoop;
import dev.modelkeeper.benchmarks.memory.HarnessOptions;
import dev.modelkeeper.benchmarks.memory.InferRequest;
import dev.modelkeeper.benchmarks.memory.MemoryReport;
import dev.modelkeeper.benchmarks.memory.ServerApi;
import dev.modelkeeper.benchmarks.memory.ServerProcess;
import dev.modelkeeper.server.grpc.ModelInferRequest;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * Compares two packaged server jars in one interleaved run: in each round each jar in turn (the
 * order alternating between rounds) runs as a child process serving its bundled demo models, is
 * warmed up, then takes closed-loop load for each {@link Workload} at 1, 8 and 64 clients, and is
 * stopped. The load generator runs in this JVM ({@link ClosedLoop}: a thread and a keep-alive
 * {@link BlockingHttpClient} per client, loopback only). Writes {@code <docs>/bench/jars.md} and
 * prints it. Not thread-safe; it is a program's entry point.
 *
 * <p>{@code java -cp modelkeeper-benchmarks/target/benchmarks.jar
 * dev.modelkeeper.benchmarks.jars.JarThroughputBench --before /tmp/before.jar [--after JAR]
 * [--rounds N] [--seconds S] [--docs DIR]}
 */
@Command(
    name = "jar-throughput-bench",
    mixinStandardHelpOptions = true,
    description =
        "Requests/s and latency of two server jars (before, after) side by side: interleaved"
            + " rounds, the demo models over loopback at 1, 8 and 64 closed-loop clients.")
public final class JarThroughputBench implements Callable<Integer> {

  /** The client counts of every workload. */
  static final List<Integer> CLIENTS = List.of(1, 8, 64);

  /** Clients during the warm-up: enough to exercise the server's concurrent paths. */
  static final int WARMUP_CLIENTS = 8;

  /** The models every server pins, so no load or eviction falls inside a measurement. */
  static final List<String> PINS =
      Stream.of(Workload.values()).map(Workload::model).distinct().toList();

  /** The line that says where a server listens; only the loopback address is accepted. */
  private static final String SERVING = "ModelKeeper is serving http://127.0.0.1:";

  @Spec CommandSpec spec;

  @Option(
      names = "--before",
      paramLabel = "PATH",
      required = true,
      description = "The previous release's server jar, e.g. /tmp/before.jar.")
  Path before;

  @Option(
      names = "--after",
      paramLabel = "PATH",
      defaultValue = "modelkeeper-cli/target/modelkeeper.jar",
      description = "The server jar under test (default: ${DEFAULT-VALUE}).")
  Path after;

  @Option(
      names = "--rounds",
      paramLabel = "N",
      defaultValue = "3",
      description = "Rounds; each starts each jar once (default: ${DEFAULT-VALUE}).")
  int rounds;

  @Option(
      names = "--seconds",
      paramLabel = "S",
      defaultValue = "5",
      description = "Seconds of load per workload and client count (default: ${DEFAULT-VALUE}).")
  int seconds;

  @Option(
      names = "--warmup-seconds",
      paramLabel = "S",
      defaultValue = "3",
      description = "Seconds of warm-up per workload after each start (default: ${DEFAULT-VALUE}).")
  int warmupSeconds;

  @Option(
      names = "--heap",
      paramLabel = "SIZE",
      defaultValue = "1g",
      description = "The servers' -Xmx (default: ${DEFAULT-VALUE}).")
  String heap;

  @Option(
      names = "--docs",
      paramLabel = "DIR",
      defaultValue = "docs",
      description = "Where bench/jars.md is written (default: ${DEFAULT-VALUE}).")
  Path docs;

  @Option(
      names = "--work",
      paramLabel = "DIR",
      description =
          "Where the servers' logs and shared cache go (default: a new temporary folder).")
  Path work;

  @Option(
      names = "--request-timeout",
      paramLabel = "SECONDS",
      defaultValue = "30",
      description = "How long one HTTP answer may take (default: ${DEFAULT-VALUE}).")
  int requestSeconds;

  @Option(
      names = "--all-forms",
      description =
          "Every model in every form (JSON, binary, gRPC raw contents) instead of one form per"
              + " model; writes bench/jars-forms.md.")
  boolean allForms;

  @Mixin HarnessOptions harness;

  /** The requests of the server being measured. */
  private final Map<Workload, InferRequest> requests = new EnumMap<>(Workload.class);

  private final Map<Workload, ModelInferRequest> grpcRequests = new EnumMap<>(Workload.class);

  /** The gRPC port every server of an all-forms run listens on (one server runs at a time). */
  private int grpcPort;

  private JarThroughputBench() {}

  @Override
  public Integer call() throws Exception {
    check();
    try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
      grpcPort = s.getLocalPort();
    }
    Instant started = Instant.now();
    String loadBefore = MemoryReport.loadAverage();
    JarReport.Jar beforeJar = JarReport.Jar.of(before);
    JarReport.Jar afterJar = JarReport.Jar.of(after);
    Path dir = Files.createDirectories(work != null ? work : Files.createTempDirectory("jarbench"));
    Path cache = Files.createDirectories(dir.resolve("cache"));
    log(
        "comparing %s (before) and %s (after): %d round(s), about %d min; logs in %s",
        before, after, rounds, expectedSeconds() / 60 + 1, dir);
    List<Measurement> all = new ArrayList<>();
    Map<Workload, Integer> requestBytes = new EnumMap<>(Workload.class);
    try {
      for (int round = 1; round <= rounds; round++) {
        for (Side side : Side.order(round)) {
          Path jar = side == Side.BEFORE ? before : after;
          Path logs = dir.resolve("round-" + round + "-" + side.label());
          all.addAll(measure(side, round, jar, cache, logs, requestBytes));
        }
      }
    } finally {
      deleteTree(cache); // the demo models the servers unpacked; the logs stay
    }
    JarReport.Run run =
        new JarReport.Run(
            started,
            Duration.between(started, Instant.now()),
            loadBefore,
            reportCommand(),
            beforeJar,
            afterJar,
            rounds,
            seconds,
            warmupSeconds,
            WARMUP_CLIENTS,
            String.join(
                " ",
                launch(Path.of("<shared cache>"))
                    .command("java", "<jar>", "<free port>", "<shared cache>")),
            requestBytes);
    String text = JarReport.markdown(run, CLIENTS, all);
    Path file = JarReport.save(docs, allForms ? JarReport.FORMS_FILE : JarReport.FILE, text);
    System.out.println(text);
    log("wrote %s; server logs are in %s", file, dir);
    return 0;
  }

  /** One server of {@code jar}: started, warmed up, measured at every workload and client count. */
  private List<Measurement> measure(
      Side side, int round, Path jar, Path cache, Path logs, Map<Workload, Integer> requestBytes)
      throws IOException, InterruptedException {
    Duration timeout = Duration.ofSeconds(requestSeconds);
    log("round %d/%d: starting %s (%s)", round, rounds, side.label(), jar);
    List<Measurement> out = new ArrayList<>();
    try (ServerProcess server =
        ServerProcess.start(jar, launch(cache), logs, harness.ready(), line -> log("%s", line))) {
      if (!server.said(SERVING + server.port())) {
        throw new IllegalStateException(
            "the server printed Ready. but no 'ModelKeeper is serving http://127.0.0.1:<port>'; "
                + server);
      }
      requests.clear();
      grpcRequests.clear();
      try (BlockingHttpClient http = new BlockingHttpClient("127.0.0.1", server.port(), timeout);
          ServerApi api = new ServerApi(server.port(), timeout)) {
        for (Workload w : workloads()) {
          InferRequest r = w.prepare(http, api);
          requests.put(w, r);
          if (w.form() == Workload.Form.GRPC) {
            ModelInferRequest g = GrpcLoad.toGrpc(r);
            GrpcLoad.check(grpcPort, g, timeout);
            grpcRequests.put(w, g);
            requestBytes.putIfAbsent(w, g.getSerializedSize());
          } else {
            requestBytes.putIfAbsent(w, r.body().length);
          }
        }
      }
      for (Workload w : workloads()) {
        ClosedLoop.Result warm = load(server, w, WARMUP_CLIENTS, warmupSeconds, timeout);
        log("  warm-up %s: answers by status %s", w.label(), warm.byStatus());
      }
      for (Workload w : workloads()) {
        for (int clients : CLIENTS) {
          ClosedLoop.Result r = load(server, w, clients, seconds, timeout);
          Measurement m = Measurement.of(side, round, w, clients, r);
          out.add(m);
          log(
              "  %s %s, %2d clients: %8.1f req/s, p50 %.2f ms, p99 %.2f ms, non-2xx %d",
              side.label(),
              w.model(),
              clients,
              m.requestsPerSecond(),
              m.p50Millis(),
              m.p99Millis(),
              m.non2xx());
        }
      }
      if (!server.isAlive()) {
        throw new IllegalStateException("the " + side.label() + " server died; " + server);
      }
      server
          .linesWhere(l -> l.contains("ERROR") || l.contains("Exception"), 5)
          .forEach(l -> log("  %s server log: %s", side.label(), l));
    }
    return out;
  }

  /**
   * How every server starts, as a user would type it: {@code java -Xmx<heap> -jar <jar> serve
   * --port <port> --grpc-port -1 --cache-dir <cache> --pin <models>}, serving its bundled demo
   * models (no {@code --repository}).
   */
  private ServerProcess.Launch launch(Path cache) {
    List<String> flags = new ArrayList<>(List.of("--pin", String.join(",", PINS)));
    if (workloads().stream().anyMatch(w -> w.form() == Workload.Form.GRPC)) {
      flags.addAll(List.of("--grpc-port", Integer.toString(grpcPort)));
    }
    return ServerProcess.Launch.ofDemo(heap, cache, flags);
  }

  /** The workloads of this run. */
  private List<Workload> workloads() {
    return allForms ? List.of(Workload.values()) : Workload.DEFAULT;
  }

  /**
   * {@code clients} closed-loop clients sending {@code w}'s request to {@code server} for {@code
   * s}.
   */
  private ClosedLoop.Result load(
      ServerProcess server, Workload w, int clients, int s, Duration timeout)
      throws InterruptedException {
    if (w.form() == Workload.Form.GRPC) {
      return GrpcLoad.run(grpcPort, grpcRequests.get(w), clients, Duration.ofSeconds(s), timeout);
    }
    return ClosedLoop.run(
        server.port(), List.of(requests.get(w)), clients, Duration.ofSeconds(s), timeout);
  }

  private void check() {
    requireJar("--before", before);
    requireJar("--after", after);
    require(rounds >= 1, "--rounds must be at least 1, was " + rounds);
    require(seconds >= 1, "--seconds must be at least 1, was " + seconds);
    require(warmupSeconds >= 0, "--warmup-seconds must not be negative, was " + warmupSeconds);
    require(
        harness.readySeconds() >= 1,
        "--ready-timeout must be at least 1, was " + harness.readySeconds());
    require(requestSeconds >= 1, "--request-timeout must be at least 1, was " + requestSeconds);
  }

  private static void requireJar(String option, Path jar) {
    if (!Files.isRegularFile(jar)) {
      throw new IllegalArgumentException(
          option
              + ": no jar at "
              + jar.toAbsolutePath()
              + " (scripts/bench-jars.sh builds modelkeeper-cli/target/modelkeeper.jar)");
    }
  }

  private static void require(boolean condition, String message) {
    if (!condition) {
      throw new IllegalArgumentException(message);
    }
  }

  /** A guess of the run's length: servers start in ~5 s and stop in ~1 s on this machine. */
  private long expectedSeconds() {
    int workloads = workloads().size();
    long perServer = 6 + (long) workloads * (warmupSeconds + CLIENTS.size() * (long) seconds);
    return 2L * rounds * perServer;
  }

  /** The command for the report: {@code --command}, else the harness's own arguments. */
  private String reportCommand() {
    return harness.command(
        JarThroughputBench.class.getName(), spec.commandLine().getParseResult().originalArgs());
  }

  private static void deleteTree(Path root) {
    try (Stream<Path> files = Files.walk(root)) {
      for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException e) {
      log("could not delete %s: %s", root, e.getMessage());
    }
  }

  /** A progress line on stderr, so stdout carries only the report. */
  static void log(String format, Object... args) {
    System.err.println(
        LocalTime.now().truncatedTo(ChronoUnit.SECONDS)
            + " jar-bench: "
            + String.format(Locale.ROOT, format, args));
  }

  public static void main(String[] args) {
    // scripts/bench-jars.sh passes --docs and --command first; a user's own value comes later and
    // wins
    CommandLine cli = new CommandLine(new JarThroughputBench()).setOverwrittenOptionsAllowed(true);
    cli.setExecutionExceptionHandler(
        (e, commandLine, parseResult) -> {
          if (e instanceof IllegalArgumentException || e instanceof IllegalStateException) {
            commandLine.getErr().println("jar-throughput-bench: " + e.getMessage());
            return e instanceof IllegalArgumentException ? 2 : 1;
          }
          throw e;
        });
    System.exit(cli.execute(args));
  }
}
