package dev.modelkeeper.server;

/**
 * Where the server stands: starting (preloading), ready, or stopping. One volatile field;
 * thread-safe.
 */
final class ServerState {

  /** The phases, in order; a server never goes back. Immutable and thread-safe. */
  enum Phase {
    STARTING,
    READY,
    STOPPING
  }

  private volatile Phase phase = Phase.STARTING;
  private final java.util.concurrent.CountDownLatch readyOrStopped =
      new java.util.concurrent.CountDownLatch(1);

  Phase phase() {
    return phase;
  }

  void ready() {
    synchronized (this) {
      if (phase == Phase.STARTING) {
        phase = Phase.READY;
      }
    }
    readyOrStopped.countDown();
  }

  void stopping() {
    synchronized (this) {
      phase = Phase.STOPPING;
    }
    readyOrStopped.countDown();
  }

  /** Waits until the server is ready or stopping; true when it is ready. */
  boolean awaitReady(java.time.Duration timeout) throws InterruptedException {
    readyOrStopped.await(timeout.toNanos(), java.util.concurrent.TimeUnit.NANOSECONDS);
    return phase == Phase.READY;
  }
}
