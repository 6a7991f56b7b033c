package dev.modelkeeper.scaleout;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The scale-out benchmark: three replicas behind HAProxy, 12 models, a budget of 4 models per
 * replica, closed-loop clients asking for the models evenly; resident models and model loads per
 * request with model-affine routing (the shipped configuration), the same without bounded load, and
 * round robin. One set of replicas serves every configuration (only the proxy is replaced); the
 * configurations are interleaved over several rounds, and every replica is cleared before each
 * measurement. Writes {@code docs/bench/scale-out.md} and the same section at the end of {@code
 * docs/BENCHMARKS.md}. Run with {@code scripts/bench-scaleout.sh}; not thread-safe.
 */
public final class ScaleOutBench {

  private static final int MODELS = 12;

  /** The budget (the 12 models exactly fill three budgets), then twice the fair share. */
  private static final List<Integer> BUDGETS = List.of(4, 8);

  private static final String HEADING = "## Scale-out: model-affine vs round-robin replicas";

  /** One measurement. */
  private record Run(
      int budget,
      Cluster.Routing routing,
      long requests,
      long failures,
      long loads,
      int resident,
      int distinct,
      int modelsWithCopies,
      double seconds,
      double p50,
      double p99) {}

  private ScaleOutBench() {}

  /** Arguments: {@code [--docs DIR] [--clients N] [--requests N] [--rounds N] [--command TEXT]}. */
  public static void main(String[] args) throws Exception {
    Path docs = null;
    int clients = 4;
    int requests = 2400;
    int rounds = 2;
    String command = "scripts/bench-scaleout.sh";
    for (int i = 0; i < args.length; i += 2) {
      switch (args[i]) {
        case "--docs" -> docs = Path.of(args[i + 1]);
        case "--clients" -> clients = Integer.parseInt(args[i + 1]);
        case "--requests" -> requests = Integer.parseInt(args[i + 1]);
        case "--rounds" -> rounds = Integer.parseInt(args[i + 1]);
        case "--command" -> command = args[i + 1];
        default -> throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    Instant started = Instant.now();
    String loadBefore = loadAverage();
    Path work = Files.createTempDirectory("modelkeeper-scaleout-bench-");
    Map<Integer, Map<Cluster.Routing, List<Run>>> runs = new java.util.TreeMap<>();
    Map<String, List<String>> affineResidency = null;
    StringBuilder loadDuring = new StringBuilder();
    try {
      for (int budget : BUDGETS) {
        Path dir = Files.createDirectories(work.resolve("budget-" + budget));
        try (Cluster cluster = Cluster.start(dir, MODELS, budget, Cluster.Routing.ROUND_ROBIN)) {
          // warm-up, not counted: the replicas' JIT and connection pools
          measure(cluster, budget, Cluster.Routing.ROUND_ROBIN, clients, 600, 0);
          for (int round = 1; round <= rounds; round++) {
            for (Cluster.Routing routing : Cluster.Routing.values()) {
              cluster.reroute(routing);
              cluster.clearAll();
              Run r = measure(cluster, budget, routing, clients, requests, round);
              runs.computeIfAbsent(budget, k -> new EnumMap<>(Cluster.Routing.class))
                  .computeIfAbsent(routing, k -> new ArrayList<>())
                  .add(r);
              if (routing == Cluster.Routing.MODEL_AFFINE_UNBOUNDED && affineResidency == null) {
                affineResidency = cluster.residency();
              }
              loadDuring.append(loadDuring.length() == 0 ? "" : "; ").append(loadAverage());
              System.out.printf(
                  "budget %d round %d %-60s %5d requests, %d failed, %.3f loads/request, %2d resident, %2d distinct, %.0f req/s, p50 %.1f ms, p99 %.1f ms%n",
                  budget,
                  round,
                  routing.label(),
                  r.requests(),
                  r.failures(),
                  (double) r.loads() / r.requests(),
                  r.resident(),
                  r.distinct(),
                  r.requests() / r.seconds(),
                  r.p50(),
                  r.p99());
            }
          }
        }
      }
    } finally {
      deleteQuietly(work);
    }
    String section =
        report(
            runs,
            affineResidency,
            clients,
            requests,
            rounds,
            command,
            started,
            loadBefore,
            loadDuring.toString());
    System.out.println(section);
    if (docs != null) {
      Files.createDirectories(docs.resolve("bench"));
      Files.writeString(
          docs.resolve("bench/scale-out.md"),
          "## Scale-out: model-affine vs round-robin replicas\n"
              + section.substring(section.indexOf('\n') + 1));
      appendToBenchmarks(docs.resolve("BENCHMARKS.md"), section);
    }
  }

  private static Run measure(
      Cluster cluster, int budget, Cluster.Routing routing, int clients, int requests, int round)
      throws IOException, InterruptedException {
    long loadsBefore = 0;
    for (Replica r : cluster.replicas()) {
      loadsBefore += r.loads();
    }
    long start = System.nanoTime();
    ClosedLoop.Result result;
    try (ClosedLoop loop =
        new ClosedLoop(
            cluster.proxy().url(),
            clients,
            Workload.even(cluster.models()),
            requests,
            31L * round)) {
      loop.awaitDone(requests, Duration.ofMinutes(10));
      result = loop.stop(Duration.ofSeconds(60));
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    long loads = -loadsBefore;
    int resident = 0;
    for (Replica r : cluster.replicas()) {
      loads += r.loads();
      resident += r.residentModels().size();
    }
    Map<String, List<String>> residency = cluster.residency();
    int distinct = (int) residency.values().stream().filter(rs -> !rs.isEmpty()).count();
    int withCopies = (int) residency.values().stream().filter(rs -> rs.size() > 1).count();
    if (result.failures() > 0) {
      System.err.println("failed requests: " + result.failureSamples());
    }
    return new Run(
        budget,
        routing,
        result.requests(),
        result.failures(),
        loads,
        resident,
        distinct,
        withCopies,
        seconds,
        result.percentileMillis(0.5),
        result.percentileMillis(0.99));
  }

  private static String report(
      Map<Integer, Map<Cluster.Routing, List<Run>>> runs,
      Map<String, List<String>> affineResidency,
      int clients,
      int requests,
      int rounds,
      String command,
      Instant started,
      String loadBefore,
      String loadDuring) {
    StringBuilder b = new StringBuilder();
    b.append(HEADING).append("\n\n");
    b.append("- Date: ")
        .append(started.truncatedTo(ChronoUnit.SECONDS))
        .append(" (")
        .append(Duration.between(started, Instant.now()).toSeconds())
        .append(" s)\n");
    b.append("- Command: `").append(command.trim()).append("`\n");
    b.append("- Machine: ").append(machine()).append('\n');
    b.append("- CPU load (1/5/15-minute load average): before ")
        .append(loadBefore)
        .append("; after each measurement ")
        .append(loadDuring)
        .append(
            ". The machine was shared with other builds: requests/s and latencies are"
                + " indicative only; the counts (loads, resident models) do not depend on speed.\n");
    b.append(
            "- Setup: HAProxy 2.6 with deploy/haproxy/haproxy.cfg (and two variants of it) in"
                + " front of three replicas of the packaged jar on loopback, ")
        .append(MODELS)
        .append(" small ONNX models served from a loopback HTTP repository. ")
        .append(clients)
        .append(" closed-loop clients, each request for a model drawn uniformly, ")
        .append(requests)
        .append(" requests per measurement after a 600-request warm-up, ")
        .append(rounds)
        .append(
            " rounds with the three routings interleaved; every replica is cleared before each"
                + " measurement, so a model's first request on a replica always loads it. Budget 4"
                + " per replica (`--max-models 4`: the three budgets hold the 12 models exactly once),"
                + " then 8 (twice the fair share, the sizing docs/DEPLOYMENT.md recommends).\n\n");
    b.append(
        "| budget | routing | requests | failed | loads | loads per request | resident (3 replicas) | distinct models resident | models on >1 replica | requests/s | p50 ms | p99 ms |\n");
    b.append("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    StringBuilder summary = new StringBuilder();
    StringBuilder memory = new StringBuilder();
    for (Map.Entry<Integer, Map<Cluster.Routing, List<Run>>> byBudget : runs.entrySet()) {
      Map<Cluster.Routing, double[]> means = new EnumMap<>(Cluster.Routing.class);
      for (Map.Entry<Cluster.Routing, List<Run>> e : byBudget.getValue().entrySet()) {
        double[] m = new double[3];
        for (Run r : e.getValue()) {
          b.append(
              String.format(
                  "| %d | %s | %d | %d | %d | %.3f | %d | %d | %d | %.0f | %.1f | %.1f |%n",
                  r.budget(),
                  e.getKey().label(),
                  r.requests(),
                  r.failures(),
                  r.loads(),
                  (double) r.loads() / r.requests(),
                  r.resident(),
                  r.distinct(),
                  r.modelsWithCopies(),
                  r.requests() / r.seconds(),
                  r.p50(),
                  r.p99()));
          m[0] += (double) r.loads() / r.requests();
          m[1] += r.resident();
          m[2] += r.distinct();
        }
        for (int i = 0; i < m.length; i++) {
          m[i] /= e.getValue().size();
        }
        means.put(e.getKey(), m);
      }
      double[] rr = means.get(Cluster.Routing.ROUND_ROBIN);
      double[] affine = means.get(Cluster.Routing.MODEL_AFFINE);
      double[] pinned = means.get(Cluster.Routing.MODEL_AFFINE_UNBOUNDED);
      memory.append(
          String.format(
              "At budget %d the fleet held %.1f models with round robin, %.1f model-affine with bounded"
                  + " load and %.1f without it (12 distinct models exist). ",
              byBudget.getKey(), rr[1], affine[1], pinned[1]));
      summary.append(
          String.format(
              "- Budget %d: loads per request (mean of the rounds) round robin %.3f, model-affine"
                  + " %.3f (%.1fx fewer), model-affine without bounded load %.3f (%.1fx fewer);"
                  + " resident models %.1f / %.1f / %.1f, of which distinct %.1f / %.1f / %.1f.%n",
              byBudget.getKey(),
              rr[0],
              affine[0],
              rr[0] / Math.max(affine[0], 1e-9),
              pinned[0],
              rr[0] / Math.max(pinned[0], 1e-9),
              rr[1],
              affine[1],
              pinned[1],
              rr[2],
              affine[2],
              pinned[2]));
    }
    b.append('\n').append(summary).append('\n');
    b.append(
            "Where the hash ring alone puts the models (budget 4, without bounded load, at the end"
                + " of a measurement; an empty list is a model evicted by its owner's budget): ")
        .append(affineResidency)
        .append(".\n\n");
    b.append(
            "Verdict: model-affine routing loads fewer models per request than round robin at"
                + " both budgets (the figures above). With round robin every replica sees all 12 models,"
                + " so with a budget below 12 it keeps evicting and reloading, and it holds copies of the"
                + " same models on several replicas. With the hash ring each replica sees only its share;"
                + " what still loads is the excess of an owner's share over its budget (12 models do not"
                + " split evenly over 3 replicas) and, with bounded load, the overflow of busy owners to"
                + " their neighbours. Bounded load costs loads under concurrency (4 clients on 3 replicas"
                + " spill often at factor 150) and buys latency for hot models; a budget of about twice"
                + " the fair share absorbs both. Memory: ")
        .append(memory)
        .append(
            "With few requests in"
                + " flight per replica, bounded load at factor 150 copies many models to a second replica"
                + " (a clustering of 2 of 4 requests on one replica already exceeds 1.5 times the average),"
                + " so it saves loads rather than memory; with more concurrency the average grows and"
                + " random clustering spills less. Raise hash-balance-factor (or set 0) where memory matters"
                + " more than hot-model latency.\n");
    return b.toString();
  }

  private static void appendToBenchmarks(Path file, String section) throws IOException {
    String text = Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
    int at = text.indexOf(HEADING);
    if (at >= 0) {
      int next = text.indexOf("\n## ", at + HEADING.length());
      text = text.substring(0, at) + (next >= 0 ? text.substring(next + 1) : "");
    }
    if (!text.isEmpty() && !text.endsWith("\n\n")) {
      text = text.endsWith("\n") ? text + "\n" : text + "\n\n";
    }
    Files.writeString(file, text + section, StandardCharsets.UTF_8);
  }

  private static String machine() {
    String cpu = "unknown CPU";
    try {
      for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
        if (line.startsWith("model name")) {
          cpu = line.substring(line.indexOf(':') + 1).trim();
          break;
        }
      }
    } catch (IOException e) {
      // keep "unknown CPU"
    }
    return cpu
        + ", "
        + Runtime.getRuntime().availableProcessors()
        + " logical processor(s), Java "
        + System.getProperty("java.version")
        + ", "
        + haproxyVersion();
  }

  private static String haproxyVersion() {
    try {
      Process p =
          new ProcessBuilder(HaProxy.ensureInstalled().toString(), "-v")
              .redirectErrorStream(true)
              .start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      p.waitFor(10, TimeUnit.SECONDS);
      String first = out.lines().findFirst().orElse("haproxy");
      return first.replaceAll(" - https?://\\S+", "");
    } catch (IOException e) {
      return "haproxy (version unknown)";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "haproxy (version unknown)";
    }
  }

  private static String loadAverage() {
    try {
      String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split(" ");
      return f[0] + "/" + f[1] + "/" + f[2];
    } catch (IOException e) {
      return "unknown";
    }
  }

  private static void deleteQuietly(Path dir) {
    try (var paths = Files.walk(dir)) {
      paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      System.err.println("could not delete " + dir + ": " + e);
    }
  }
}
