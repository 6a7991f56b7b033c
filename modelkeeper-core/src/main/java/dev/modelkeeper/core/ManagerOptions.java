package dev.modelkeeper.core;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executor;
import org.jspecify.annotations.Nullable;

/**
 * Immutable settings of a {@link BaseModelManager}; build with {@link #builder()}. Every wait the
 * manager performs is bounded by one of these timeouts.
 */
public final class ManagerOptions {

  /** How many times the first back-off window the longest one is, unless set apart. */
  public static final int BACKOFF_GROWTH = 60;

  private final Duration lifecycleTimeout;
  private final Duration drainTimeout;
  private final Duration failureBackoff;
  private final Duration maxFailureBackoff;
  private final Duration leakThreshold;
  private final Ticker ticker;
  private final @Nullable Executor executor;

  private ManagerOptions(Builder b) {
    this.lifecycleTimeout = b.lifecycleTimeout;
    this.drainTimeout = b.drainTimeout;
    this.failureBackoff = b.failureBackoff;
    this.maxFailureBackoff = b.maxFailureBackoff;
    this.leakThreshold = b.leakThreshold;
    this.ticker = b.ticker;
    this.executor = b.executor;
  }

  public static ManagerOptions defaults() {
    return builder().build();
  }

  public static Builder builder() {
    return new Builder();
  }

  /** How long a caller waits for another operation on the same identifier (default 60s). */
  public Duration lifecycleTimeout() {
    return lifecycleTimeout;
  }

  /** How long {@code remove} waits for open leases to close (default 30s). */
  public Duration drainTimeout() {
    return drainTimeout;
  }

  /** The first back-off window after a failed load; zero disables back-off (default 1s). */
  public Duration failureBackoff() {
    return failureBackoff;
  }

  /** The longest back-off window; windows double on repeated failures (default 60s). */
  public Duration maxFailureBackoff() {
    return maxFailureBackoff;
  }

  /** Leases held longer than this are reported once; zero disables detection (the default). */
  public Duration leakThreshold() {
    return leakThreshold;
  }

  public Ticker ticker() {
    return ticker;
  }

  /** Runs {@code acquireAsync} work that cannot complete at once; null means a default pool. */
  public @Nullable Executor executor() {
    return executor;
  }

  /** A mutable builder; {@link #build()} validates and freezes the settings. */
  public static final class Builder {
    private Duration lifecycleTimeout = Duration.ofSeconds(60);
    private Duration drainTimeout = Duration.ofSeconds(30);
    private Duration failureBackoff = Duration.ofSeconds(1);
    private Duration maxFailureBackoff = failureBackoff.multipliedBy(BACKOFF_GROWTH);
    private Duration leakThreshold = Duration.ZERO;
    private Ticker ticker = Ticker.system();
    private @Nullable Executor executor;

    private Builder() {}

    public Builder lifecycleTimeout(Duration d) {
      this.lifecycleTimeout = positive("lifecycleTimeout", d);
      return this;
    }

    public Builder drainTimeout(Duration d) {
      this.drainTimeout = positive("drainTimeout", d);
      return this;
    }

    /** A first back-off window of {@code initial}, the longest {@link #BACKOFF_GROWTH} times it. */
    public Builder failureBackoff(Duration initial) {
      return failureBackoff(
          initial, notNegative("failureBackoff", initial).multipliedBy(BACKOFF_GROWTH));
    }

    public Builder failureBackoff(Duration initial, Duration max) {
      this.failureBackoff = notNegative("failureBackoff", initial);
      this.maxFailureBackoff = notNegative("maxFailureBackoff", max);
      return this;
    }

    public Builder leakThreshold(Duration d) {
      this.leakThreshold = notNegative("leakThreshold", d);
      return this;
    }

    public Builder ticker(Ticker ticker) {
      this.ticker = Objects.requireNonNull(ticker, "ticker");
      return this;
    }

    public Builder executor(Executor executor) {
      this.executor = Objects.requireNonNull(executor, "executor");
      return this;
    }

    public ManagerOptions build() {
      if (maxFailureBackoff.compareTo(failureBackoff) < 0) {
        throw new IllegalArgumentException(
            "maxFailureBackoff ("
                + maxFailureBackoff
                + ") is below failureBackoff ("
                + failureBackoff
                + ")");
      }
      return new ManagerOptions(this);
    }

    static Duration positive(String name, Duration d) {
      Objects.requireNonNull(d, name);
      if (d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException(name + " must be positive, was " + d);
      }
      return d;
    }

    static Duration notNegative(String name, Duration d) {
      Objects.requireNonNull(d, name);
      if (d.isNegative()) {
        throw new IllegalArgumentException(name + " must not be negative, was " + d);
      }
      return d;
    }
  }
}
