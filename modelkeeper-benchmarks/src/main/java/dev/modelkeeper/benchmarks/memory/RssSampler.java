package dev.modelkeeper.benchmarks.memory;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Samples a process's resident set size ({@code VmRSS} of {@code /proc/<pid>/status}) every {@value
 * #PERIOD_MILLIS} ms on a thread of its own, from construction until {@link #close}. Thread-safe:
 * the sampling thread appends, the harness thread reads.
 */
final class RssSampler implements AutoCloseable {

  static final long PERIOD_MILLIS = 100;

  private final Path status;
  private final long startNanos = System.nanoTime();
  private final ScheduledExecutorService timer;
  private final Object lock = new Object();

  @GuardedBy("lock")
  private long[] millis = new long[1024];

  @GuardedBy("lock")
  private long[] bytes = new long[1024];

  @GuardedBy("lock")
  private int size;

  /** Starts sampling process {@code pid}. */
  RssSampler(long pid) {
    this.status = Path.of("/proc", Long.toString(pid), "status");
    this.timer =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "rss-sampler-" + pid);
              t.setDaemon(true);
              return t;
            });
    timer.scheduleAtFixedRate(this::sample, 0, PERIOD_MILLIS, TimeUnit.MILLISECONDS);
  }

  /**
   * The resident bytes {@code status} (a /proc status file) shows now; -1 once the process is gone.
   */
  static long residentBytes(Path status) {
    try {
      for (String line : Files.readAllLines(status)) {
        if (line.startsWith("VmRSS:")) {
          String[] f = line.substring(6).trim().split("\\s+");
          return Long.parseLong(f[0]) * 1024; // the kernel writes kB, meaning KiB
        }
      }
      return -1; // a zombie has no VmRSS line
    } catch (IOException e) {
      return -1; // gone: /proc/<pid> vanishes when the process is reaped
    }
  }

  private void sample() {
    long rss = residentBytes(status);
    if (rss < 0) {
      return;
    }
    long at = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    synchronized (lock) {
      if (size == millis.length) {
        millis = Arrays.copyOf(millis, size * 2);
        bytes = Arrays.copyOf(bytes, size * 2);
      }
      millis[size] = at;
      bytes[size] = rss;
      size++;
    }
  }

  /** A position in the samples: the number taken so far. */
  int mark() {
    synchronized (lock) {
      return size;
    }
  }

  /** The largest sample taken since {@code mark} (the current reading if none); bytes. */
  long maxSince(int mark) {
    long now = residentBytes(status);
    synchronized (lock) {
      long max = now;
      for (int i = mark; i < size; i++) {
        max = Math.max(max, bytes[i]);
      }
      return max;
    }
  }

  /** The resident bytes now, read afresh; -1 when the process has exited. */
  long now() {
    return residentBytes(status);
  }

  /**
   * The samples taken since {@code mark}: {@code [0]} milliseconds since the sampler started,
   * {@code [1]} resident bytes.
   */
  long[][] since(int mark) {
    synchronized (lock) {
      return new long[][] {
        Arrays.copyOfRange(millis, mark, size), Arrays.copyOfRange(bytes, mark, size)
      };
    }
  }

  /** Stops sampling; waits at most a second for a sample being taken. */
  @Override
  public void close() {
    timer.shutdownNow();
    try {
      timer.awaitTermination(1, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
