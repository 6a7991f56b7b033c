package dev.modelkeeper.core.testkit;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A pause point inside fake model code: the thread that reaches it signals {@link #awaitEntered}
 * and blocks until {@link #open}. Every wait is bounded so a broken schedule fails instead of
 * hanging. Thread-safe.
 */
public final class Gate {
  public static final long TIMEOUT_SECONDS = 10;

  private final CountDownLatch entered;
  private final CountDownLatch released = new CountDownLatch(1);

  public Gate() {
    this(1);
  }

  /** A gate that reports entered after {@code arrivals} threads reached it. */
  public Gate(int arrivals) {
    this.entered = new CountDownLatch(arrivals);
  }

  /** Called by the code under test: reports arrival and waits to be let through. */
  public void pass() {
    entered.countDown();
    try {
      if (!released.await(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
        throw new IllegalStateException("gate was never opened");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted at gate", e);
    }
  }

  /** Called by the test: waits until the code under test has reached the gate. */
  public void awaitEntered() {
    try {
      if (!entered.await(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
        throw new AssertionError("nobody reached the gate within " + TIMEOUT_SECONDS + "s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted", e);
    }
  }

  public boolean isEntered() {
    return entered.getCount() == 0;
  }

  public void open() {
    released.countDown();
  }
}
