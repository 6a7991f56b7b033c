package dev.modelkeeper.server.engine;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Where the server stands: starting (preloading), ready, or stopping. One volatile field;
 * thread-safe.
 */
public final class ServerState {

  /** The phases, in order; a server never goes back. Immutable and thread-safe. */
  public enum Phase {
    STARTING,
    READY,
    STOPPING
  }

  private volatile Phase phase = Phase.STARTING;
  private final CountDownLatch readyOrStopped = new CountDownLatch(1);

  public Phase phase() {
    return phase;
  }

  public void ready() {
    synchronized (this) {
      if (phase == Phase.STARTING) {
        phase = Phase.READY;
      }
    }
    readyOrStopped.countDown();
  }

  public void stopping() {
    synchronized (this) {
      phase = Phase.STOPPING;
    }
    readyOrStopped.countDown();
  }

  /** Waits until the server is ready or stopping; true when it is ready. */
  public boolean awaitReady(Duration timeout) throws InterruptedException {
    readyOrStopped.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
    return phase == Phase.READY;
  }
}
