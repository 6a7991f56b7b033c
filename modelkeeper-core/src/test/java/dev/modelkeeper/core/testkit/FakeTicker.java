package dev.modelkeeper.core.testkit;

import dev.modelkeeper.core.Ticker;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A ticker that moves only when told to, or by one nanosecond per read when auto-advancing.
 * Thread-safe.
 */
public final class FakeTicker implements Ticker {
  private final AtomicLong now = new AtomicLong(1_000_000_000L);
  private final boolean autoAdvance;

  private FakeTicker(boolean autoAdvance) {
    this.autoAdvance = autoAdvance;
  }

  /** A clock that stands still until {@link #advance} is called. */
  public static FakeTicker manual() {
    return new FakeTicker(false);
  }

  /**
   * A clock whose every read is one nanosecond later than the last: recency becomes a total order.
   */
  public static FakeTicker autoAdvancing() {
    return new FakeTicker(true);
  }

  @Override
  public long read() {
    return autoAdvance ? now.incrementAndGet() : now.get();
  }

  public void advance(Duration d) {
    now.addAndGet(d.toNanos());
  }
}
