package dev.modelkeeper.benchmarks.jars;

import dev.modelkeeper.benchmarks.memory.MemoryReport;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The Markdown of a jar-against-jar run, written to {@code <docs>/bench/jars.md} (the whole file,
 * replaced): when and how it ran, which files were compared, and per workload and client count the
 * median requests/s of each jar, the median of the per-round ratios after/before with each round's
 * ratio, and the latencies. Stateless and thread-safe.
 */
final class JarReport {

  static final String FILE = "jars.md";

  /** The file of a run of every model in every form. */
  static final String FORMS_FILE = "jars-forms.md";

  private static final DateTimeFormatter UTC =
      DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss", Locale.ROOT).withZone(ZoneOffset.UTC);

  private JarReport() {}

  /**
   * A compared jar file, identified by more than its path.
   *
   * @param path as given
   * @param bytes its size
   * @param modified its modification time
   * @param sha256 its SHA-256, hex
   */
  record Jar(Path path, long bytes, Instant modified, String sha256) {
    static Jar of(Path path) throws IOException {
      MessageDigest digest;
      try {
        digest = MessageDigest.getInstance("SHA-256");
      } catch (NoSuchAlgorithmException e) {
        throw new IllegalStateException("this JVM has no SHA-256", e);
      }
      try (InputStream in = Files.newInputStream(path)) {
        byte[] buffer = new byte[1 << 16];
        for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
          digest.update(buffer, 0, n);
        }
      }
      return new Jar(
          path,
          Files.size(path),
          Files.getLastModifiedTime(path).toInstant(),
          HexFormat.of().formatHex(digest.digest()));
    }

    String describe() {
      return String.format(
          Locale.ROOT,
          "`%s` (%.1f MB, modified %s UTC, SHA-256 `%s`)",
          path,
          bytes / 1e6,
          UTC.format(modified),
          sha256.substring(0, 16));
    }
  }

  /**
   * How a run was set up.
   *
   * @param started when it started
   * @param took how long it took
   * @param loadBefore {@code /proc/loadavg} before the first server started
   * @param command the command that reproduces it
   * @param before the previous release
   * @param after the jar under test
   * @param rounds rounds run
   * @param seconds seconds of load per workload and client count
   * @param warmupSeconds seconds of warm-up per workload after each start
   * @param warmupClients clients during the warm-up
   * @param serverCommand an example of a server's command line
   * @param requestBytes the body size of each workload's request
   */
  record Run(
      Instant started,
      Duration took,
      String loadBefore,
      String command,
      Jar before,
      Jar after,
      int rounds,
      int seconds,
      int warmupSeconds,
      int warmupClients,
      String serverCommand,
      Map<Workload, Integer> requestBytes) {}

  /** The report of {@code run} from its measurements {@code all}. */
  static String markdown(Run run, List<Integer> clientCounts, List<Measurement> all) {
    StringBuilder sb = new StringBuilder("## Jar throughput: before vs after\n\n");
    sb.append("Measured ")
        .append(UTC.format(run.started()))
        .append(" UTC; took ")
        .append(minutes(run.took()))
        .append(". Load average before the run: `")
        .append(run.loadBefore())
        .append("` (/proc/loadavg). Command: `")
        .append(run.command())
        .append("`.\n\n");
    sb.append("- before: ").append(run.before().describe()).append('\n');
    sb.append("- after: ").append(run.after().describe()).append("\n\n");
    if (run.before().sha256().equals(run.after().sha256())) {
      sb.append("Both sides are the same file, so every difference below is noise.\n\n");
    }
    sb.append(run.rounds())
        .append(run.rounds() == 1 ? " round" : " rounds")
        .append(
            "; in each, each jar in turn (before then after in odd rounds, after then before in")
        .append(" even ones) ran as a child process serving its bundled demo models: `")
        .append(run.serverCommand())
        .append("` (a free port each time; one cache folder for every run). After `Ready.`, ")
        .append(run.warmupSeconds())
        .append(" s of warm-up per workload at ")
        .append(run.warmupClients())
        .append(" clients, then for each workload and each client count ")
        .append(run.seconds())
        .append(
            " s of closed-loop load; then SIGTERM. The load generator runs in the harness's JVM")
        .append(" on the same machine (`BlockingHttpClient`: one thread and one keep-alive")
        .append(
            " connection per client, over loopback; gRPC clients one channel each), so clients and server share its cores.")
        .append(" Clients do not retry: after a 503 or 429 a client waits what `Retry-After` says")
        .append(" (capped, see `memory.ClosedLoop`) before its next request.\n\n");
    sb.append("Requests, one row each: ")
        .append(
            run.requestBytes().entrySet().stream()
                .map(e -> e.getKey().label() + " " + e.getValue() + " B")
                .collect(Collectors.joining(", ")))
        .append(". req/s counts 2xx answers per second; p50 and p99 are of the 200 answers, in ms;")
        .append(" each figure is the median over the rounds, and after/before is the median of the")
        .append(" per-round ratios, listed beside it in round order.\n\n");
    sb.append(
        "| Workload | Clients | before req/s | after req/s | after/before | per-round ratios"
            + " | p50 ms before → after | p99 ms before → after | non-2xx before / after |\n");
    sb.append("|---|---:|---:|---:|---:|---|---:|---:|---:|\n");
    for (Workload w : run.requestBytes().keySet()) {
      for (int c : clientCounts) {
        row(sb, w, c, run.rounds(), all);
      }
    }
    sb.append("\nMachine:\n\n").append(MemoryReport.machine());
    return sb.toString();
  }

  private static void row(
      StringBuilder sb, Workload w, int clients, int rounds, List<Measurement> all) {
    Measurement[] before = perRound(all, Side.BEFORE, w, clients, rounds);
    Measurement[] after = perRound(all, Side.AFTER, w, clients, rounds);
    double[] ratios = new double[rounds];
    for (int r = 0; r < rounds; r++) {
      ratios[r] = after[r].requestsPerSecond() / before[r].requestsPerSecond();
    }
    sb.append("| ")
        .append(w.label())
        .append(" | ")
        .append(clients)
        .append(" | ")
        .append(rate(median(before, Measurement::requestsPerSecond)))
        .append(" | ")
        .append(rate(median(after, Measurement::requestsPerSecond)))
        .append(" | **")
        .append(fixed(median(ratios)))
        .append("** | ")
        .append(Arrays.stream(ratios).mapToObj(JarReport::fixed).collect(Collectors.joining(", ")))
        .append(" | ")
        .append(fixed(median(before, Measurement::p50Millis)))
        .append(" → ")
        .append(fixed(median(after, Measurement::p50Millis)))
        .append(" | ")
        .append(fixed(median(before, Measurement::p99Millis)))
        .append(" → ")
        .append(fixed(median(after, Measurement::p99Millis)))
        .append(" | ")
        .append(Arrays.stream(before).mapToLong(Measurement::non2xx).sum())
        .append(" / ")
        .append(Arrays.stream(after).mapToLong(Measurement::non2xx).sum())
        .append(" |\n");
  }

  /** The measurements of one side, workload and client count, by round. */
  private static Measurement[] perRound(
      List<Measurement> all, Side side, Workload w, int clients, int rounds) {
    Measurement[] out = new Measurement[rounds];
    for (Measurement m : all) {
      if (m.side() == side && m.workload() == w && m.clients() == clients) {
        out[m.round() - 1] = m;
      }
    }
    for (int r = 0; r < rounds; r++) {
      if (out[r] == null) {
        throw new IllegalStateException(
            "no "
                + side.label()
                + " measurement of "
                + w
                + " at "
                + clients
                + " in round "
                + (r + 1));
      }
    }
    return out;
  }

  private static double median(
      Measurement[] ms, java.util.function.ToDoubleFunction<Measurement> figure) {
    return median(Arrays.stream(ms).mapToDouble(figure).toArray());
  }

  /** The median of {@code values}, NaN ones ignored; NaN when none is left. */
  static double median(double[] values) {
    double[] v = Arrays.stream(values).filter(x -> !Double.isNaN(x)).sorted().toArray();
    if (v.length == 0) {
      return Double.NaN;
    }
    int mid = v.length / 2;
    return v.length % 2 == 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
  }

  private static String rate(double perSecond) {
    if (Double.isNaN(perSecond)) {
      return "n/a";
    }
    return String.format(Locale.ROOT, perSecond >= 100 ? "%.0f" : "%.1f", perSecond);
  }

  private static String fixed(double v) {
    return Double.isNaN(v) || Double.isInfinite(v) ? "n/a" : String.format(Locale.ROOT, "%.2f", v);
  }

  private static String minutes(Duration d) {
    return String.format(Locale.ROOT, "%d min %02d s", d.toMinutes(), d.toSecondsPart());
  }

  /** Writes {@code text} to {@code <docs>/bench/<name>}; returns the file. */
  static Path save(Path docs, String name, String text) throws IOException {
    Path file = Files.createDirectories(docs.resolve("bench")).resolve(name);
    Files.writeString(file, text, StandardCharsets.UTF_8);
    return file;
  }
}
