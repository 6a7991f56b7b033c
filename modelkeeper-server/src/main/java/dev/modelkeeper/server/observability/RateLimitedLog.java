package dev.modelkeeper.server.observability;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * WARN lines, without stack traces, at most one per interval; the next line counts the ones left
 * out meanwhile. For problems a client can cause at will (broken bodies), so it cannot flood the
 * log. Thread-safe.
 */
public final class RateLimitedLog {

  private final System.Logger log;
  private final long intervalNanos;
  private final AtomicLong nextAllowed = new AtomicLong(Long.MIN_VALUE);
  private final AtomicLong suppressed = new AtomicLong();

  public RateLimitedLog(System.Logger log, Duration interval) {
    this.log = log;
    this.intervalNanos = interval.toNanos();
  }

  /** Logs {@code message} at WARN unless a line was logged less than an interval ago. */
  public void warn(String message) {
    long now = System.nanoTime();
    long allowed = nextAllowed.get();
    if ((allowed != Long.MIN_VALUE && now - allowed < 0)
        || !nextAllowed.compareAndSet(allowed, now + intervalNanos)) {
      suppressed.incrementAndGet();
      return;
    }
    long left = suppressed.getAndSet(0);
    if (left > 0) {
      log.log(Level.WARNING, "{0} ({1} similar lines left out)", message, left);
    } else {
      log.log(Level.WARNING, message);
    }
  }
}
