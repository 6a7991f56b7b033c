package dev.modelkeeper.core;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ScheduledExecutorService;
import org.jspecify.annotations.Nullable;

/** Immutable settings of a {@link WithFixedSizeCache}; build with {@link #builder(int)}. */
public final class CacheOptions {

  private final int maxSize;
  private final long maxBytes;
  private final Duration capacityTimeout;
  private final Duration lockTimeout;
  private final Duration expireAfterIdle;
  private final @Nullable ScheduledExecutorService scheduler;

  private CacheOptions(Builder b) {
    this.expireAfterIdle = b.expireAfterIdle;
    this.scheduler = b.scheduler;
    this.maxSize = b.maxSize;
    this.maxBytes = b.maxBytes;
    this.capacityTimeout = b.capacityTimeout;
    this.lockTimeout = b.lockTimeout;
  }

  /** Settings with a count budget of {@code maxSize} models and no byte budget. */
  public static Builder builder(int maxSize) {
    return new Builder(maxSize);
  }

  /** The most models resident or loading at once. */
  public int maxSize() {
    return maxSize;
  }

  /** The most bytes resident or loading at once; 0 means no byte budget. */
  public long maxBytes() {
    return maxBytes;
  }

  /** How long a load waits for room when only leased or busy models could make it (default 30s). */
  public Duration capacityTimeout() {
    return capacityTimeout;
  }

  /** How long an operation waits for the budget's own short lock (default 10s). */
  public Duration lockTimeout() {
    return lockTimeout;
  }

  /**
   * Models unused for this long (by the manager's ticker; leased and pinned ones never) are
   * evicted; zero, the default, means never. A periodic sweep finds them, every tenth of this time.
   */
  public Duration expireAfterIdle() {
    return expireAfterIdle;
  }

  /** Runs the idle sweep; null (the default) means one shared daemon thread. */
  public @Nullable ScheduledExecutorService scheduler() {
    return scheduler;
  }

  @Override
  public String toString() {
    return "maxSize="
        + maxSize
        + (maxBytes > 0 ? ", maxBytes=" + maxBytes : "")
        + (expireAfterIdle.isZero() ? "" : ", expireAfterIdle=" + expireAfterIdle);
  }

  /** A mutable builder; {@link #build()} freezes the settings. */
  public static final class Builder {
    private final int maxSize;
    private long maxBytes;
    private Duration capacityTimeout = Duration.ofSeconds(30);
    private Duration lockTimeout = Duration.ofSeconds(10);
    private Duration expireAfterIdle = Duration.ZERO;
    private @Nullable ScheduledExecutorService scheduler;

    private Builder(int maxSize) {
      if (maxSize < 1) {
        throw new IllegalArgumentException("maxSize must be at least 1, was " + maxSize);
      }
      this.maxSize = maxSize;
    }

    public Builder maxBytes(long maxBytes) {
      if (maxBytes < 0) {
        throw new IllegalArgumentException("maxBytes must not be negative, was " + maxBytes);
      }
      this.maxBytes = maxBytes;
      return this;
    }

    public Builder capacityTimeout(Duration d) {
      this.capacityTimeout = ManagerOptions.Builder.notNegative("capacityTimeout", d);
      return this;
    }

    public Builder lockTimeout(Duration d) {
      this.lockTimeout = ManagerOptions.Builder.positive("lockTimeout", d);
      return this;
    }

    /** Evicts models unused for {@code idle}; zero turns idle expiry off (the default). */
    public Builder expireAfterIdle(Duration idle) {
      this.expireAfterIdle = ManagerOptions.Builder.notNegative("expireAfterIdle", idle);
      return this;
    }

    /** The scheduler of the idle sweep (instead of the shared daemon thread). */
    public Builder scheduler(ScheduledExecutorService scheduler) {
      this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
      return this;
    }

    public CacheOptions build() {
      return new CacheOptions(this);
    }
  }
}
