package dev.modelkeeper.benchmarks.memory;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/** Renders closed-loop runs ({@link LoadRun.Result}) as Markdown. Stateless and thread-safe. */
final class LoadRunTable {

  private LoadRunTable() {}

  /** One row per run: memory against its limit, then what the clients saw. */
  static String table(List<LoadRun.Result> runs) {
    StringBuilder sb = new StringBuilder();
    sb.append(
        "| run | limit MiB | max RSS MiB | max RSS / limit | samples above limit | median RSS MiB"
            + " | requests | 200 | non-2xx | % 200 | 200/s | p50 ms | p99 ms | loads | evictions"
            + " | OOM logged |\n");
    sb.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
    for (LoadRun.Result r : runs) {
      ClosedLoop.Result l = r.load();
      long total = l.total();
      long ok = l.ok();
      long non2xx =
          l.byStatus().entrySet().stream()
              .filter(e -> e.getKey() < 200 || e.getKey() > 299)
              .mapToLong(e -> e.getValue())
              .sum();
      sb.append(
          String.format(
              Locale.ROOT,
              "| %s | %s | %s | %s | %s | %s | %d | %d | %d | %s | %.1f | %.1f | %.1f | %.0f | %.0f |"
                  + " %s |\n",
              r.label(),
              MemoryReport.mib(r.limitBytes()),
              MemoryReport.mib(r.maxRss()),
              MemoryReport.ratio(r.maxRss(), r.limitBytes()),
              Double.isNaN(r.shareAboveLimit())
                  ? "n/a"
                  : String.format(Locale.ROOT, "%.1f%%", r.shareAboveLimit() * 100),
              MemoryReport.mib(median(r.rss())),
              total,
              ok,
              non2xx,
              total == 0 ? "n/a" : String.format(Locale.ROOT, "%.1f", 100.0 * ok / total),
              ok / l.seconds(),
              l.percentileMillis(50),
              l.percentileMillis(99),
              r.loads(),
              r.evictionsTotal(),
              r.outOfMemory().isEmpty() ? "no" : "**yes**"));
    }
    return sb.toString();
  }

  /** Per run: the server's command, statuses, eviction reasons, memory metrics, resident models. */
  static String details(List<LoadRun.Result> runs) {
    StringBuilder sb = new StringBuilder();
    for (LoadRun.Result r : runs) {
      sb.append("\n`").append(r.label()).append("`: `").append(String.join(" ", r.command()));
      sb.append("`; limit from ").append(r.limitSource()).append('.');
      sb.append(" Requests by status: ").append(r.load().statuses()).append('.');
      sb.append(" Evictions by reason: ").append(reasons(r.evictions()));
      sb.append(". ").append(r.rss().length).append(" RSS samples");
      if (!r.memoryMetrics().isEmpty()) {
        sb.append("; at the end the server reported ");
        r.memoryMetrics()
            .forEach(
                (k, v) ->
                    sb.append('`')
                        .append(k)
                        .append("` ")
                        .append(MemoryReport.mib(v))
                        .append(" MiB "));
      }
      sb.append(r.died() ? ". **The server exited during the run.**" : ".");
      if (!r.outOfMemory().isEmpty()) {
        sb.append(" **OutOfMemoryError in its log:** `").append(r.outOfMemory().get(0)).append('`');
      }
      sb.append("\n");
      if (!r.charges().isEmpty()) {
        sb.append(
            "\nResident at the end (registry: file size, `charged_bytes`, `measured_bytes`):\n\n");
        r.charges().forEach(c -> sb.append("- ").append(c).append('\n'));
      }
    }
    return sb.toString();
  }

  /** {@code {reason="idle"}=3.0, ...} as {@code idle 3, ...}. */
  static String reasons(java.util.Map<String, Double> evictions) {
    if (evictions.isEmpty()) {
      return "none reported";
    }
    StringBuilder sb = new StringBuilder();
    evictions.forEach(
        (labels, n) ->
            sb.append(sb.length() == 0 ? "" : ", ")
                .append(labels.replaceAll("^\\{reason=\"(.*)\"\\}$", "$1"))
                .append(' ')
                .append(String.format(Locale.ROOT, "%.0f", n)));
    return sb.toString();
  }

  static long median(long[] values) {
    if (values.length == 0) {
      return -1;
    }
    long[] sorted = values.clone();
    Arrays.sort(sorted);
    return sorted[(sorted.length - 1) / 2];
  }
}
