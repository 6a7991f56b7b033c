package dev.modelkeeper.core;

/**
 * A source of nanosecond time, injected so that load times, back-off windows and leak thresholds
 * can be driven by a fake clock in tests. Must be thread-safe. Never read on the hot path.
 */
@FunctionalInterface
public interface Ticker {

  long read();

  static Ticker system() {
    return System::nanoTime;
  }
}
