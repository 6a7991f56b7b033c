package dev.modelkeeper.scaleout;

import dev.modelkeeper.testkit.Http;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Closed-loop clients: each of {@code clients} threads sends one inference request through the
 * proxy, waits for the answer, and sends the next, until stopped or until {@code maxRequests} have
 * been sent in all. A request fails when it gets anything but 200 or no answer at all. Thread-safe.
 *
 * <p>Why clients of our own here: ScaleOutIT asserts on every request (no request fails while a
 * replica is SIGKILLed; how a hot model's requests spread; the first failures, described), which a
 * load tool's aggregate counts do not give. It measures no published figure: the scale-out
 * benchmark uses wrk ({@code scripts/bench-scaleout.sh}).
 */
public final class ClosedLoop implements AutoCloseable {

  /**
   * What the clients saw. Immutable and thread-safe.
   *
   * @param requests requests answered or failed
   * @param failures requests that did not get 200
   * @param failureSamples the first few failures, described
   * @param perModel requests per model
   * @param latenciesNanos every request's latency, sorted
   */
  public record Result(
      long requests,
      long failures,
      List<String> failureSamples,
      Map<String, Long> perModel,
      long[] latenciesNanos) {

    /** The latency at quantile {@code q} (0..1), in milliseconds. */
    public double percentileMillis(double q) {
      if (latenciesNanos.length == 0) {
        return Double.NaN;
      }
      int i = (int) Math.min(latenciesNanos.length - 1, Math.ceil(q * latenciesNanos.length) - 1);
      return latenciesNanos[Math.max(0, i)] / 1e6;
    }
  }

  private final String url;
  private final Workload workload;
  private final long maxRequests;
  private final Http http = new Http(); // see the class comment for why clients of our own
  private final List<Thread> threads = new ArrayList<>();
  private final AtomicBoolean stopping = new AtomicBoolean();
  private final AtomicLong sent = new AtomicLong();
  private final LongAdder done = new LongAdder();
  private final LongAdder failures = new LongAdder();
  private final List<String> failureSamples = Collections.synchronizedList(new ArrayList<>());
  private final Map<String, LongAdder> perModel = new ConcurrentHashMap<>();
  private final List<long[]> latencies = Collections.synchronizedList(new ArrayList<>());

  /** Starts {@code clients} threads against the proxy at {@code proxyUrl}. */
  public ClosedLoop(String proxyUrl, int clients, Workload workload, long maxRequests, long seed) {
    this.url = proxyUrl;
    this.workload = workload;
    this.maxRequests = maxRequests;
    SplittableRandom seeds = new SplittableRandom(seed);
    for (int i = 0; i < clients; i++) {
      SplittableRandom random = seeds.split();
      Thread t = new Thread(() -> run(random), "client-" + i);
      t.setDaemon(true);
      threads.add(t);
    }
    threads.forEach(Thread::start);
  }

  private void run(SplittableRandom random) {
    long[] mine = new long[(int) Math.min(maxRequests, 1 << 20)];
    int n = 0;
    try {
      while (!stopping.get() && sent.incrementAndGet() <= maxRequests) {
        String model = workload.next(random);
        long start = System.nanoTime();
        String problem = null;
        try {
          Http.Response a =
              http.post(
                  url + "/v2/models/" + model + "/infer", GeneratedRepository.inferBody(model));
          if (a.status() != 200) {
            problem = model + ": HTTP " + a.status() + " " + a.body();
          }
        } catch (UncheckedIOException e) {
          problem = model + ": " + e.getCause();
        } catch (IllegalStateException interrupted) {
          return; // the client's send was interrupted: the run is stopping
        }
        if (n < mine.length) {
          mine[n++] = System.nanoTime() - start;
        }
        perModel.computeIfAbsent(model, m -> new LongAdder()).increment();
        if (problem != null) {
          failures.increment();
          if (failureSamples.size() < 10) {
            failureSamples.add(problem);
          }
        }
        done.increment();
      }
    } finally {
      latencies.add(Arrays.copyOf(mine, n));
    }
  }

  /** Requests finished so far. */
  public long done() {
    return done.sum();
  }

  /** Waits until {@code n} requests finished in all (or the clients ended). */
  public void awaitDone(long n, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (done.sum() < n) {
      if (threads.stream().noneMatch(Thread::isAlive)) {
        return;
      }
      if (System.nanoTime() - deadline > 0) {
        throw new IllegalStateException(
            "only " + done.sum() + " of " + n + " requests finished within " + timeout);
      }
      Thread.sleep(10); // polling the clients' progress counter
    }
  }

  /** Stops the clients (each finishes its request in flight) and returns what they saw. */
  public Result stop(Duration timeout) throws InterruptedException {
    stopping.set(true);
    long deadline = System.nanoTime() + timeout.toNanos();
    for (Thread t : threads) {
      t.join(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
      if (t.isAlive()) {
        throw new IllegalStateException(t.getName() + " still running after " + timeout);
      }
    }
    long[] all = latencies.stream().flatMapToLong(Arrays::stream).sorted().toArray();
    Map<String, Long> counts = new TreeMap<>();
    perModel.forEach((m, c) -> counts.put(m, c.sum()));
    return new Result(done.sum(), failures.sum(), List.copyOf(failureSamples), counts, all);
  }

  @Override
  public void close() {
    stopping.set(true);
    threads.forEach(Thread::interrupt);
  }
}
