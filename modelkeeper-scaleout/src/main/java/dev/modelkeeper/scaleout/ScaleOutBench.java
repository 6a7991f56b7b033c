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
 * request with model-affine routing (the shipped configuration), the same without bounded load,
 * and round robin. One set of replicas serves every configuration (only the proxy is replaced);
 * the configurations are interleaved over several rounds, and every replica is cleared before
 * each measurement. Writes {@code docs/bench/scale-out.md} and the same section at the end of
 * {@code docs/BENCHMARKS.md}. Run with {@code scripts/bench-scaleout.sh}; not thread-safe.
 */
public final class ScaleOutBench {

  private static final int MODELS = 12;
  private static final int BUDGET = 4;
  private static final String HEADING = "## Scale-out: model-affine vs round-robin replicas";

  /** One measurement. */
  private record Run(
      Cluster.Routing routing,
      long requests,
      long failures,
      long loads,
      int resident,
      int modelsWithCopies,
      double seconds,
      double p50,
      double p99) {}

  private ScaleOutBench() {}

  /**
   * Arguments: {@code [--docs DIR] [--clients N] [--requests N] [--rounds N] [--command TEXT]}.
   */
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
    Map<Cluster.Routing, List<Run>> runs = new EnumMap<>(Cluster.Routing.class);
    Map<String, List<String>> affineResidency = null;
    StringBuilder loadDuring = new StringBuilder();
    try (Cluster cluster = Cluster.start(work, MODELS, BUDGET, Cluster.Routing.MODEL_AFFINE)) {
      for (int round = 1; round <= rounds; round++) {
        for (Cluster.Routing routing : Cluster.Routing.values()) {
          cluster.reroute(routing);
          cluster.clearAll();
          Run r = measure(cluster, routing, clients, requests, round);
          runs.computeIfAbsent(routing, k -> new ArrayList<>()).add(r);
          if (routing == Cluster.Routing.MODEL_AFFINE_UNBOUNDED && affineResidency == null) {
            affineResidency = cluster.residency();
          }
          loadDuring.append(loadDuring.length() == 0 ? "" : "; ").append(loadAverage());
          System.out.printf(
              "round %d %-60s %5d requests, %d failed, %.3f loads/request, %2d resident (%d models on >1 replica), %.0f req/s, p50 %.1f ms, p99 %.1f ms%n",
              round, routing.label(), r.requests(), r.failures(), (double) r.loads() / r.requests(),
              r.resident(), r.modelsWithCopies(), r.requests() / r.seconds(), r.p50(), r.p99());
        }
      }
    } finally {
      deleteQuietly(work);
    }
    String section =
        report(runs, affineResidency, clients, requests, rounds, command, started, loadBefore, loadDuring.toString());
    System.out.println(section);
    if (docs != null) {
      Files.createDirectories(docs.resolve("bench"));
      Files.writeString(docs.resolve("bench/scale-out.md"), "# Scale-out benchmark\n\n" + section.substring(section.indexOf('\n') + 1));
      appendToBenchmarks(docs.resolve("BENCHMARKS.md"), section);
    }
  }

  private static Run measure(Cluster cluster, Cluster.Routing routing, int clients, int requests, int round)
      throws IOException, InterruptedException {
    long loadsBefore = 0;
    for (Replica r : cluster.replicas()) {
      loadsBefore += r.loads();
    }
    long start = System.nanoTime();
    ClosedLoop.Result result;
    try (ClosedLoop loop =
        new ClosedLoop(cluster.proxy().url(), clients, Workload.even(cluster.models()), requests, 31L * round)) {
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
    int withCopies = (int) cluster.residency().values().stream().filter(rs -> rs.size() > 1).count();
    return new Run(routing, result.requests(), result.failures(), loads, resident, withCopies, seconds,
        result.percentileMillis(0.5), result.percentileMillis(0.99));
  }

  private static String report(
      Map<Cluster.Routing, List<Run>> runs,
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
    b.append("- Date: ").append(started.truncatedTo(ChronoUnit.SECONDS)).append(" (")
        .append(Duration.between(started, Instant.now()).toSeconds()).append(" s)\n");
    b.append("- Command: `").append(command).append("`\n");
    b.append("- Machine: ").append(machine()).append('\n');
    b.append("- CPU load (1/5/15-minute load average): before ").append(loadBefore)
        .append("; after each measurement ").append(loadDuring)
        .append(". The machine was shared with other builds: latencies are indicative, the counts"
            + " (loads, resident models) are not affected by load.\n");
    b.append("- Setup: HAProxy 2.6 with deploy/haproxy/haproxy.cfg in front of three replicas of"
        + " the packaged jar on loopback, ").append(MODELS).append(" small ONNX models served"
        + " from a loopback HTTP repository, `--max-models ").append(BUDGET).append("` per replica"
        + " (so the three budgets hold exactly the 12 models once). ").append(clients)
        .append(" closed-loop clients, each request for a model drawn uniformly, ").append(requests)
        .append(" requests per measurement, ").append(rounds)
        .append(" rounds with the configurations interleaved; every replica is cleared before each"
            + " measurement, so the first request for a model on a replica always loads it.\n\n");
    b.append("| routing | requests | failed | loads | loads per request | resident models (3 replicas) | models on >1 replica | requests/s | p50 ms | p99 ms |\n");
    b.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    Map<Cluster.Routing, double[]> totals = new EnumMap<>(Cluster.Routing.class);
    for (Map.Entry<Cluster.Routing, List<Run>> e : runs.entrySet()) {
      double[] t = new double[2];
      for (Run r : e.getValue()) {
        b.append(String.format("| %s | %d | %d | %d | %.3f | %d | %d | %.0f | %.1f | %.1f |%n",
            e.getKey().label(), r.requests(), r.failures(), r.loads(), (double) r.loads() / r.requests(),
            r.resident(), r.modelsWithCopies(), r.requests() / r.seconds(), r.p50(), r.p99()));
        t[0] += (double) r.loads() / r.requests();
        t[1] += r.resident();
      }
      t[0] /= e.getValue().size();
      t[1] /= e.getValue().size();
      totals.put(e.getKey(), t);
    }
    double[] rr = totals.get(Cluster.Routing.ROUND_ROBIN);
    double[] affine = totals.get(Cluster.Routing.MODEL_AFFINE);
    double[] pinned = totals.get(Cluster.Routing.MODEL_AFFINE_UNBOUNDED);
    b.append('\n');
    b.append(String.format(
        "Loads per request (mean of the rounds): round robin %.3f, model-affine %.3f (%.1fx fewer),"
            + " model-affine without bounded load %.3f (%.1fx fewer).%n",
        rr[0], affine[0], rr[0] / Math.max(affine[0], 1e-9), pinned[0], rr[0] / Math.max(pinned[0], 1e-9)));
    b.append(String.format(
        "Resident models at the end: round robin %.1f, model-affine %.1f, without bounded load %.1f.%n%n",
        rr[1], affine[1], pinned[1]));
    b.append("Where the models live without bounded load (the hash ring alone): ")
        .append(affineResidency).append(".\n\n");
    b.append("Verdict: ").append(verdict(rr, affine, pinned)).append('\n');
    return b.toString();
  }

  private static String verdict(double[] rr, double[] affine, double[] pinned) {
    StringBuilder v = new StringBuilder();
    v.append(affine[0] < rr[0]
        ? "model-affine routing loads less per request than round robin"
        : "model-affine routing does NOT load less per request than round robin");
    v.append(String.format(" (%.3f vs %.3f). ", affine[0], rr[0]));
    v.append("With round robin every replica sees all 12 models through a budget of 4, so it keeps"
        + " evicting and reloading; with the hash ring each replica sees its own share, and only"
        + " that share's excess over the budget (the ring is not perfectly even) and, with bounded"
        + " load, the overflow of busy owners cause loads. ");
    v.append(String.format(
        "Bounded load trades some affinity for latency under concurrency: %.3f loads per request"
            + " with it, %.3f without.", affine[0], pinned[0]));
    return v.toString();
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
    return cpu + ", " + Runtime.getRuntime().availableProcessors() + " logical processor(s), Java "
        + System.getProperty("java.version") + ", " + haproxyVersion();
  }

  private static String haproxyVersion() {
    try {
      Process p = new ProcessBuilder(HaProxy.ensureInstalled().toString(), "-v").redirectErrorStream(true).start();
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
