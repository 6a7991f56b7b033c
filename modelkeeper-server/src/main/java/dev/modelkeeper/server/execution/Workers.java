package dev.modelkeeper.server.execution;

import dev.modelkeeper.server.errors.UnavailableException;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The engine's bounded pool of worker threads for the slow part of requests (anything that may
 * load, infer, wait for a lifecycle or unload), so transport threads never block on models, and the
 * request timeout that bounds every such wait. Thread-safe.
 *
 * <p>An action that times out keeps running to its end (its lease is closed by its own {@code
 * try}); only its answer is dropped.
 */
public final class Workers {

  private static final Duration BUSY_RETRY = Duration.ofSeconds(1);
  private static final AtomicInteger POOLS = new AtomicInteger();

  private final ThreadPoolExecutor pool;

  /** Leaves for requests to run their model on their own thread: half the workers' count. */
  private final Semaphore modelRuns;

  private final Duration timeout;

  public Workers(int threads, Duration timeout) {
    int n = POOLS.incrementAndGet();
    AtomicInteger ids = new AtomicInteger();
    this.pool =
        IdleFirstPool.create(
            threads,
            Math.max(64, threads * 16),
            30,
            r -> {
              Thread t = new Thread(r, "modelkeeper-worker-" + n + "-" + ids.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    this.modelRuns = new Semaphore(Math.max(1, threads / 2));
    this.timeout = timeout;
  }

  /** How long a request may take before it is answered 503. */
  public Duration timeout() {
    return timeout;
  }

  /**
   * Takes a leave for a request to run its model on its own thread; at most half as many as there
   * are workers at once, so runs of slow or stalled models never hold every thread. A taken leave
   * is given back with {@link #endModelRun}.
   */
  public boolean tryModelRun() {
    return modelRuns.tryAcquire();
  }

  public void endModelRun() {
    modelRuns.release();
  }

  /**
   * Runs {@code task} on a worker.
   *
   * @throws UnavailableException when every worker and queue slot is taken or the pool is stopping
   */
  public void execute(Runnable task) {
    try {
      pool.execute(task);
    } catch (RejectedExecutionException busy) {
      throw busy();
    }
  }

  /**
   * Runs {@code action} on a worker. The future fails with {@link UnavailableException} when every
   * worker and queue slot is taken or the action outlives the request timeout; cancelling it
   * interrupts the action (a call whose client left or whose deadline passed stops waiting for
   * loads and leases).
   */
  public <T> CompletableFuture<T> call(Callable<T> action) {
    CompletableFuture<T> outcome = new CompletableFuture<>();
    Future<?> task;
    try {
      task =
          pool.submit(
              () -> {
                try {
                  outcome.complete(action.call());
                } catch (Throwable t) {
                  outcome.completeExceptionally(t);
                }
              });
    } catch (RejectedExecutionException rejected) {
      outcome.completeExceptionally(busy());
      return outcome;
    }
    outcome.whenComplete(
        (result, failure) -> {
          if (outcome.isCancelled()) {
            task.cancel(true);
          }
        });
    return withinTimeout(outcome);
  }

  /**
   * {@code outcome}, failing with {@link UnavailableException} when it outlives the request
   * timeout; cancelling the returned future cancels {@code outcome}.
   */
  public <T> CompletableFuture<T> withinTimeout(CompletableFuture<T> outcome) {
    CompletableFuture<T> bounded = new CompletableFuture<>();
    outcome
        .orTimeout(timeout.toNanos(), TimeUnit.NANOSECONDS)
        .whenComplete(
            (result, failure) -> {
              if (failure == null) {
                bounded.complete(result);
              } else {
                bounded.completeExceptionally(timedOut(failure));
              }
            });
    bounded.whenComplete(
        (result, failure) -> {
          if (bounded.isCancelled()) {
            outcome.cancel(true);
          }
        });
    return bounded;
  }

  /** Runs a task that is not tied to a request (preloading) on the same workers. */
  public CompletableFuture<Void> background(Runnable task) {
    return CompletableFuture.runAsync(task, pool);
  }

  /** {@code failure}, or the request timeout's 503 when it is the timeout's. */
  public Throwable timedOut(Throwable failure) {
    if (failure instanceof TimeoutException) {
      return new UnavailableException(
          "the request did not finish within the request timeout of " + timeout, BUSY_RETRY);
    }
    return failure;
  }

  /**
   * Why a task could not be queued: the pool is shutting down, or every worker and slot is taken.
   */
  private UnavailableException busy() {
    return new UnavailableException(
        pool.isShutdown()
            ? "the server is shutting down"
            : "all " + pool.getMaximumPoolSize() + " workers are busy and their queue is full",
        BUSY_RETRY);
  }

  /** Stops taking work and waits up to {@code grace} for running actions; true when all ended. */
  public boolean shutdown(Duration grace) {
    pool.shutdown();
    try {
      if (pool.awaitTermination(grace.toNanos(), TimeUnit.NANOSECONDS)) {
        return true;
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    pool.shutdownNow();
    return false;
  }
}
