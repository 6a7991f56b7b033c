package dev.modelkeeper.benchmarks.memory;

import dev.modelkeeper.benchmarks.BlockingHttpClient;
import dev.modelkeeper.benchmarks.Latencies;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * Closed-loop clients of one server: each sends a request, waits for its answer, then sends the
 * next, rotating over the target requests (client {@code i} starts at target {@code i}), until the
 * time is up. No retries: a request answered 503 or 429 is counted and the client waits what {@code
 * Retry-After} asks (at most {@link #MAX_BACKOFF}, {@link #DEFAULT_BACKOFF} when absent) before its
 * next request, which goes to the next target, so a full server is not spun against. Each client
 * owns one keep-alive {@link BlockingHttpClient}. Not thread-safe; one call runs its own client
 * threads and returns after joining them.
 */
public final class ClosedLoop {

  static final Duration MAX_BACKOFF = Duration.ofSeconds(1);
  static final Duration DEFAULT_BACKOFF = Duration.ofMillis(100);

  /** The status recorded for a request that got no HTTP answer (a connection or read failure). */
  static final int NO_ANSWER = -1;

  private ClosedLoop() {}

  /**
   * What the clients saw.
   *
   * @param byStatus requests per HTTP status ({@link #NO_ANSWER} for none), ascending
   * @param okNanos latencies of the 200 answers, sorted ascending
   * @param seconds how long the clients ran
   */
  public record Result(Map<Integer, Long> byStatus, long[] okNanos, double seconds) {
    long total() {
      return byStatus.values().stream().mapToLong(Long::longValue).sum();
    }

    long ok() {
      return byStatus.getOrDefault(200, 0L);
    }

    /** Nearest-rank percentile {@code p} of the 200 answers' latency, in ms; NaN when none. */
    public double percentileMillis(double p) {
      return okNanos.length == 0 ? Double.NaN : Latencies.percentile(okNanos, p) / 1e6;
    }

    /** Statuses and counts, e.g. {@code 200: 1234, 503: 5}. */
    String statuses() {
      StringBuilder sb = new StringBuilder();
      byStatus.forEach(
          (s, n) ->
              sb.append(sb.length() == 0 ? "" : ", ")
                  .append(s == NO_ANSWER ? "no answer" : s.toString())
                  .append(": ")
                  .append(n));
      return sb.length() == 0 ? "none" : sb.toString();
    }
  }

  /** One client's tallies; written by its thread, read after the join. */
  private static final class Tally {
    final Map<Integer, Long> byStatus = new TreeMap<>();
    final Latencies ok = new Latencies();

    void count(int status) {
      byStatus.merge(status, 1L, Long::sum);
    }

    void ok(long nanos) {
      ok.record(nanos);
    }
  }

  /**
   * Runs {@code clients} clients of the server on {@code port} over {@code targets} for {@code
   * duration}; each request gives up after {@code requestTimeout}.
   *
   * @throws IllegalStateException when a client does not stop within {@code requestTimeout} and a
   *     minute after the end
   */
  public static Result run(
      int port, List<InferRequest> targets, int clients, Duration duration, Duration requestTimeout)
      throws InterruptedException {
    long start = System.nanoTime();
    long end = start + duration.toNanos();
    List<Tally> tallies = new ArrayList<>();
    List<Thread> threads = new ArrayList<>();
    for (int c = 0; c < clients; c++) {
      Tally tally = new Tally();
      tallies.add(tally);
      int first = c;
      threads.add(
          new Thread(
              () -> drive(port, targets, first, end, requestTimeout, tally), "memory-client-" + c));
    }
    threads.forEach(Thread::start);
    long joinBy = end + requestTimeout.toNanos() + TimeUnit.MINUTES.toNanos(1);
    for (Thread t : threads) {
      t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(joinBy - System.nanoTime())));
      if (t.isAlive()) {
        threads.forEach(Thread::interrupt);
        throw new IllegalStateException(t.getName() + " did not stop in time");
      }
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    Map<Integer, Long> byStatus = new TreeMap<>();
    List<Latencies> oks = new ArrayList<>();
    for (Tally t : tallies) {
      t.byStatus.forEach((s, n) -> byStatus.merge(s, n, Long::sum));
      oks.add(t.ok);
    }
    return new Result(byStatus, Latencies.mergeSorted(oks), seconds);
  }

  private static void drive(
      int port,
      List<InferRequest> targets,
      int first,
      long end,
      Duration requestTimeout,
      Tally tally) {
    BlockingHttpClient http = new BlockingHttpClient("127.0.0.1", port, requestTimeout);
    try {
      for (int i = first; System.nanoTime() < end && !Thread.currentThread().isInterrupted(); i++) {
        InferRequest r = targets.get(i % targets.size());
        long s = System.nanoTime();
        try {
          BlockingHttpClient.Response answer = http.post(r.path(), r.headers(), r.body());
          tally.count(answer.status());
          if (answer.status() == 200) {
            tally.ok(System.nanoTime() - s);
          } else if (answer.status() == 503 || answer.status() == 429) {
            long wait = backoffMillis(answer.header("Retry-After"));
            TimeUnit.MILLISECONDS.sleep(
                Math.min(
                    wait, Math.max(0, TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime()))));
          }
        } catch (IOException e) {
          tally.count(NO_ANSWER);
          close(http); // the next request opens a fresh connection
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt(); // the harness gave up waiting: stop
    } finally {
      close(http);
    }
  }

  /** How long to wait after a refusal carrying {@code retryAfter} (seconds), capped. */
  static long backoffMillis(String retryAfter) {
    if (retryAfter == null) {
      return DEFAULT_BACKOFF.toMillis();
    }
    try {
      return Math.min(
          MAX_BACKOFF.toMillis(), Math.max(0, Long.parseLong(retryAfter.trim()) * 1000));
    } catch (NumberFormatException e) {
      return DEFAULT_BACKOFF.toMillis(); // an HTTP date: not worth parsing for a cap of a second
    }
  }

  private static void close(BlockingHttpClient http) {
    try {
      http.close();
    } catch (IOException e) {
      // the connection is gone either way
    }
  }
}
