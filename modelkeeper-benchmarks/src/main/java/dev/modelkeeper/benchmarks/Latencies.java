package dev.modelkeeper.benchmarks;

import java.util.Arrays;

/**
 * Request latencies of one thread, in nanoseconds, kept in full (a churn run records a few hundred
 * thousand). Not thread-safe: each worker owns one and the harness merges them after joining.
 */
public final class Latencies {

  private long[] values = new long[1024];
  private int size;

  public void record(long nanos) {
    if (size == values.length) {
      values = Arrays.copyOf(values, size * 2);
    }
    values[size++] = nanos;
  }

  int size() {
    return size;
  }

  /** All values of {@code parts}, sorted ascending. */
  public static long[] mergeSorted(Iterable<Latencies> parts) {
    int total = 0;
    for (Latencies p : parts) {
      total += p.size;
    }
    long[] all = new long[total];
    int at = 0;
    for (Latencies p : parts) {
      System.arraycopy(p.values, 0, all, at, p.size);
      at += p.size;
    }
    Arrays.sort(all);
    return all;
  }

  /**
   * The nearest-rank percentile {@code p} (0 < p <= 100) of ascending {@code sorted}; 0 when empty.
   */
  public static long percentile(long[] sorted, double p) {
    if (!(p > 0 && p <= 100)) {
      throw new IllegalArgumentException("percentile must be in (0, 100], was " + p);
    }
    if (sorted.length == 0) {
      return 0;
    }
    int rank = (int) Math.ceil(p / 100 * sorted.length);
    return sorted[Math.max(0, rank - 1)];
  }
}
