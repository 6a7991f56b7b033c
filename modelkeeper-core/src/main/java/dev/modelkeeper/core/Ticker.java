package dev.modelkeeper.core;

/**
 * A source of nanosecond time, injected so that load times, back-off windows and leak thresholds
 * can be driven by a fake clock in tests. Must be thread-safe. Not read by a lease, only once per
 * drain of the read buffer.
 */
@FunctionalInterface
public interface Ticker {

  long read();

  static Ticker system() {
    return System::nanoTime;
  }
}
