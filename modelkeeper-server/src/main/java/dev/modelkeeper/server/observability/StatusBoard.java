package dev.modelkeeper.server.observability;

import dev.modelkeeper.core.LifecycleListener;
import dev.modelkeeper.core.Model;
import dev.modelkeeper.core.RemovalCause;
import dev.modelkeeper.server.errors.PathRedaction;
import java.time.Clock;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * What the status page shows beyond the registry: requests per second, queue depth and p99 per
 * model over the last {@value #WINDOW_SECONDS} seconds, a {@value #HISTORY_SECONDS}-second history
 * of request rate and process memory, and the latest loads, load failures and removals.
 * Thread-safe.
 *
 * <p>Nothing here runs on the request path: once a second the board reads the totals the metrics
 * already keep ({@link ServerMetrics.Activity}) and the process's resident bytes, and rates and
 * percentiles are differences between two such readings. A percentile is the upper bound of the
 * histogram bucket it falls in.
 */
public final class StatusBoard implements LifecycleListener {

  static final int WINDOW_SECONDS = 10;
  static final int HISTORY_SECONDS = 120;
  static final int EVENTS = 20;

  private final Supplier<ServerMetrics.Activity> activity;
  private final LongSupplier residentBytes;
  private final Clock clock;
  private final Deque<Sample> samples = new ArrayDeque<>();
  private final Deque<Event> events = new ArrayDeque<>();

  private final PathRedaction redaction;

  StatusBoard(
      Supplier<ServerMetrics.Activity> activity,
      LongSupplier residentBytes,
      Clock clock,
      PathRedaction redaction) {
    this.activity = activity;
    this.residentBytes = residentBytes;
    this.clock = clock;
    this.redaction = redaction;
  }

  /**
   * A board over {@code metrics} and the process memory {@code residentBytes} reports, its event
   * messages passed through {@code redaction} (the page is an answer to a client).
   */
  public static StatusBoard of(
      ServerMetrics metrics, LongSupplier residentBytes, PathRedaction redaction) {
    return new StatusBoard(metrics::activity, residentBytes, Clock.systemUTC(), redaction);
  }

  /** Takes a reading now and then once a second on {@code timer}. */
  public void start(ScheduledExecutorService timer) {
    sample();
    timer.scheduleAtFixedRate(this::sample, 1, 1, TimeUnit.SECONDS);
  }

  /** One lifecycle event as the page lists it. */
  public record Event(long epochMillis, String modelId, String what, String detail) {}

  /** One second of the history: inference requests answered per second and resident bytes. */
  public record Point(long epochMillis, double requestsPerSecond, long residentBytes) {}

  /**
   * One model's recent activity.
   *
   * @param p99RunMillis the 99th percentile of model run time, empty when it did not run
   * @param p99QueueMillis the 99th percentile of queue wait, empty when nothing queued
   */
  public record ModelActivity(
      int queueDepth,
      double runsPerSecond,
      OptionalDouble p99RunMillis,
      OptionalDouble p99QueueMillis) {}

  /**
   * The board now.
   *
   * @param requestsPerSecond inference requests answered per second over the window
   * @param models activity by resolved model identifier
   * @param history one point per second, oldest first
   * @param recent lifecycle events, newest first
   */
  public record View(
      double requestsPerSecond,
      Map<String, ModelActivity> models,
      List<Point> history,
      List<Event> recent) {}

  /** Reads the totals and the process memory once. */
  void sample() {
    Sample s = new Sample(clock.millis(), activity.get(), residentBytes.getAsLong());
    synchronized (samples) {
      samples.addLast(s);
      while (samples.size() > HISTORY_SECONDS + 1) {
        samples.removeFirst();
      }
    }
  }

  /** Rates and percentiles from the readings so far. */
  public View view() {
    List<Sample> all;
    synchronized (samples) {
      all = new ArrayList<>(samples);
    }
    List<Event> recent;
    synchronized (events) {
      recent = new ArrayList<>(events);
    }
    if (all.isEmpty()) {
      return new View(0, Map.of(), List.of(), recent);
    }
    List<Point> history = new ArrayList<>();
    for (int i = 1; i < all.size(); i++) {
      Sample a = all.get(i - 1);
      Sample b = all.get(i);
      history.add(
          new Point(
              b.millis,
              perSecond(a, b, a.totals.inferRequests(), b.totals.inferRequests()),
              b.rss));
    }
    Sample last = all.get(all.size() - 1);
    Sample first = all.get(Math.max(0, all.size() - 1 - WINDOW_SECONDS));
    Map<String, ModelActivity> models = new HashMap<>();
    last.totals
        .models()
        .forEach(
            (id, now) -> {
              ServerMetrics.ModelTotals then = first.totals.models().get(id);
              models.put(
                  id,
                  new ModelActivity(
                      now.queueDepth(),
                      perSecond(
                          first, last, then == null ? 0 : then.runs().count(), now.runs().count()),
                      p99(then == null ? null : then.runs(), now.runs()),
                      p99(then == null ? null : then.queueWaits(), now.queueWaits())));
            });
    return new View(
        perSecond(first, last, first.totals.inferRequests(), last.totals.inferRequests()),
        models,
        history,
        recent);
  }

  private static double perSecond(Sample a, Sample b, long before, long after) {
    long millis = b.millis - a.millis;
    return millis <= 0 ? 0 : (after - before) * 1000.0 / millis;
  }

  /**
   * The bound of the bucket that holds the 99th percentile of what {@code now} recorded after
   * {@code then}; infinite when it lies above the last bucket, empty when nothing was recorded.
   */
  static OptionalDouble p99(ServerMetrics.Histogram then, ServerMetrics.Histogram now) {
    long count = now.count() - (then == null ? 0 : then.count());
    if (count <= 0) {
      return OptionalDouble.empty();
    }
    long wanted = (long) Math.ceil(count * 0.99);
    double[] bounds = now.boundsMillis();
    for (int i = 0; i < bounds.length; i++) {
      long atOrBelow = now.cumulative()[i] - (then == null ? 0 : then.cumulative()[i]);
      if (atOrBelow >= wanted) {
        return OptionalDouble.of(bounds[i]);
      }
    }
    return OptionalDouble.of(Double.POSITIVE_INFINITY);
  }

  @Override
  public void loaded(String modelId, Model model, long sizeBytes, long loadNanos) {
    remember(
        modelId,
        "loaded",
        String.format(Locale.ROOT, "%.1f MiB in %.2f s", sizeBytes / 1048576.0, loadNanos / 1e9));
  }

  @Override
  public void loadFailed(String modelId, Throwable cause) {
    remember(modelId, "load failed", redaction.apply(String.valueOf(cause.getMessage())));
  }

  @Override
  public void removed(String modelId, Model model, RemovalCause cause) {
    remember(
        modelId,
        cause.isEviction() ? "evicted" : "unloaded",
        cause.name().toLowerCase(Locale.ROOT).replace('_', ' '));
  }

  private void remember(String modelId, String what, String detail) {
    Event e = new Event(clock.millis(), modelId, what, detail);
    synchronized (events) {
      events.addFirst(e);
      while (events.size() > EVENTS) {
        events.removeLast();
      }
    }
  }

  private record Sample(long millis, ServerMetrics.Activity totals, long rss) {}
}
