package dev.modelkeeper.core;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Back-off after failed loads: within a window after a failure of X, new loads of X fail fast with
 * the recorded cause. The window doubles on each consecutive failure up to a maximum and is
 * forgotten on success. A failure that will not change ({@link ModelUnservableException}) opens no
 * window: it is remembered only to log it once per streak. Thread-safe; touched only on the cold
 * path.
 */
final class LoadFailures {

  private final Ticker ticker;
  private final long initialNanos;
  private final long maxNanos;
  private final ConcurrentHashMap<String, Record> records = new ConcurrentHashMap<>();

  LoadFailures(Ticker ticker, Duration initial, Duration max) {
    this.ticker = ticker;
    this.initialNanos = initial.toNanos();
    this.maxNanos = max.toNanos();
  }

  /** Throws {@link LoadBackoffException} when the window of {@code id} is open. */
  void check(String id) {
    Record r = records.get(id);
    if (r == null) {
      return;
    }
    long remaining = r.until - ticker.read();
    if (remaining > 0) {
      throw new LoadBackoffException(
          "loading '"
              + id
              + "' failed "
              + r.failures
              + " time(s) in a row; next attempt allowed in "
              + Duration.ofNanos(remaining).toMillis()
              + " ms (last failure: "
              + describe(r.cause)
              + ")",
          Duration.ofNanos(remaining),
          r.cause);
    }
  }

  /**
   * Records a failed load of {@code id}; returns true when it starts a streak of failures or fails
   * otherwise than the one before (worth a log line), false when it repeats the last failure.
   */
  boolean failed(String id, Throwable cause) {
    boolean permanent = cause instanceof ModelUnservableException;
    if ((initialNanos == 0 && !permanent) || Failures.isTransient(cause)) {
      return true;
    }
    boolean[] news = new boolean[1];
    records.compute(
        id,
        (k, old) -> {
          news[0] = old == null || !describe(old.cause).equals(describe(cause));
          int n = old == null ? 1 : old.failures + 1;
          long window = initialNanos;
          for (int i = 1; i < n && window < maxNanos; i++) {
            window *= 2;
          }
          long until = permanent ? ticker.read() : ticker.read() + Math.min(window, maxNanos);
          return new Record(cause, n, until);
        });
    return news[0];
  }

  /** What failed, in words: the failure's message, never its class. */
  static String describe(Throwable cause) {
    String m = cause.getMessage();
    return m == null || m.isBlank() ? "unknown error" : m;
  }

  void succeeded(String id) {
    if (!records.isEmpty()) {
      records.remove(id);
    }
  }

  private static final class Record {
    final Throwable cause;
    final int failures;
    final long until;

    Record(Throwable cause, int failures, long until) {
      this.cause = cause;
      this.failures = failures;
      this.until = until;
    }
  }
}
