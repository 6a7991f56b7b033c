package dev.modelkeeper.benchmarks.memory;

import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The memory benchmark's Markdown: each scenario writes a {@code ### } part of {@code
 * docs/bench/memory.md} (replacing its own part from an earlier run, keeping the others), and the
 * whole file becomes the {@code ## Memory} section of {@code docs/BENCHMARKS.md} (replaced, or
 * appended when missing; other sections untouched). Stateless and thread-safe (the files are not
 * locked: run one harness at a time).
 */
public final class MemoryReport {

  static final String SECTION = "## Memory";
  static final String FILE = "memory.md";
  static final String CHART = "memory-rss.png";

  private static final double MIB = 1024.0 * 1024.0;

  private MemoryReport() {}

  /** Bytes as MiB with one decimal, or {@code n/a} when unknown (negative or NaN). */
  static String mib(double bytes) {
    return bytes >= 0 ? String.format(Locale.ROOT, "%.1f", bytes / MIB) : "n/a";
  }

  /** A file's size in the unit that reads best: B, KiB or MiB. */
  static String size(long bytes) {
    if (bytes < 1024) {
      return bytes + " B";
    }
    return bytes < 1024 * 1024
        ? String.format(Locale.ROOT, "%.1f KiB", bytes / 1024.0)
        : String.format(Locale.ROOT, "%.1f MiB", bytes / MIB);
  }

  /** {@code a / b} with two decimals, or {@code n/a}. */
  static String ratio(double a, double b) {
    return a >= 0 && b > 0 ? String.format(Locale.ROOT, "%.2f", a / b) : "n/a";
  }

  /** The first line of {@code /proc/loadavg}, read now. */
  public static String loadAverage() {
    try {
      return Files.readAllLines(Path.of("/proc/loadavg")).get(0).trim();
    } catch (IOException | RuntimeException e) {
      return "unknown";
    }
  }

  /**
   * The lines every scenario's report opens with: when, where, what load the machine had before,
   * the heap and allocator settings and the command that reproduces it.
   */
  static String preamble(Instant started, String loadBefore, String heap, String command) {
    StringBuilder sb = new StringBuilder();
    sb.append("Measured ")
        .append(
            DateTimeFormatter.ISO_LOCAL_DATE_TIME.format(
                started.atOffset(ZoneOffset.UTC).withNano(0)))
        .append(" UTC; load average before the run: `")
        .append(loadBefore)
        .append("` (/proc/loadavg). Server heap `-Xmx")
        .append(heap)
        .append("`; allocator: ")
        .append(allocator())
        .append(". Command: `")
        .append(command)
        .append("`.\n\nMachine:\n\n")
        .append(machine())
        .append('\n');
    return sb.toString();
  }

  /**
   * The allocator settings the server children inherit: glibc's tunables from the environment, or
   * glibc's defaults when none is set.
   */
  static String allocator() {
    Map<String, String> set = new TreeMap<>();
    System.getenv()
        .forEach(
            (k, v) -> {
              if (k.startsWith("MALLOC_") || k.equals("GLIBC_TUNABLES") || k.equals("LD_PRELOAD")) {
                set.put(k, v);
              }
            });
    if (set.isEmpty()) {
      return "glibc malloc with its defaults (no MALLOC_*, GLIBC_TUNABLES or LD_PRELOAD set)";
    }
    StringBuilder sb = new StringBuilder();
    set.forEach((k, v) -> sb.append(sb.length() == 0 ? "" : ", ").append(k).append('=').append(v));
    return "`" + sb + "`";
  }

  /**
   * The machine, as every benchmark report describes it: {@code Machine.describe()} of the
   * benchmarks package. That class is package-private and this change may not edit it, so it is
   * called reflectively here; make it public and call it directly.
   */
  public static String machine() {
    try {
      Method describe =
          Class.forName("dev.modelkeeper.benchmarks.Machine").getDeclaredMethod("describe");
      describe.setAccessible(true);
      return (String) describe.invoke(null);
    } catch (ReflectiveOperationException | RuntimeException e) {
      return "- (dev.modelkeeper.benchmarks.Machine.describe() unavailable: " + e + ")\n";
    }
  }

  /**
   * Puts {@code part} (Markdown opening with its {@code ### } heading) into {@code
   * docs/bench/memory.md}, then that file's text into {@code docs/BENCHMARKS.md} as its {@code ##
   * Memory} section; returns the new {@code memory.md}.
   */
  static String save(Path docs, String part) throws IOException {
    Path bench = Files.createDirectories(docs.resolve("bench"));
    Path file = bench.resolve(FILE);
    String text =
        Files.exists(file)
            ? Files.readString(file, StandardCharsets.UTF_8)
            : SECTION
                + "\n\nProcess memory of the server under load (workload 11, memory churn, and"
                + " workload 6, memory return, of the design's BENCHMARKS.md), measured by"
                + " `dev.modelkeeper.benchmarks.memory.MemoryBench`: the server jar runs as a child"
                + " process on loopback and the harness samples its `VmRSS` from"
                + " `/proc/<pid>/status` every "
                + RssSampler.PERIOD_MILLIS
                + " ms. Each part below says when and how it was measured; parts are replaced one"
                + " at a time, so they may come from different runs.\n";
    text = replace(text, part, List.of("## ", "### "));
    Files.writeString(file, text, StandardCharsets.UTF_8);
    Path all = docs.resolve("BENCHMARKS.md");
    String whole = Files.exists(all) ? Files.readString(all, StandardCharsets.UTF_8) : "";
    Files.writeString(all, replace(whole, text, List.of("## ")), StandardCharsets.UTF_8);
    return text;
  }

  /**
   * {@code text} with the part whose heading is {@code part}'s first line replaced by {@code part}
   * (up to the next heading that starts with one of {@code ends}), or {@code part} appended.
   */
  static String replace(String text, String part, List<String> ends) {
    String heading = part.lines().findFirst().orElseThrow();
    String body = part.endsWith("\n") ? part : part + "\n";
    String padded = "\n" + text;
    int at = padded.indexOf("\n" + heading + "\n");
    if (at < 0) {
      return (text.isBlank() ? "" : text.stripTrailing() + "\n\n") + body;
    }
    int next = -1;
    for (String end : ends) {
      int n = padded.indexOf("\n" + end, at + 1);
      if (n >= 0 && (next < 0 || n < next)) {
        next = n;
      }
    }
    String before = padded.substring(1, at + 1);
    String after = next < 0 ? "" : "\n" + padded.substring(next + 1);
    return before + body + after;
  }
}
