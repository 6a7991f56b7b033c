package dev.modelkeeper.server;

import io.javalin.http.Context;
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
 * Runs the slow part of requests (anything that may load, infer, wait for a lifecycle or unload) on
 * a bounded pool of worker threads, so HTTP threads never block on models, and answers every such
 * request exactly once: with the action's result, with its failure through the {@link ErrorMapper},
 * or with 503 when it outlives the request timeout or finds every worker and queue slot taken.
 * Thread-safe.
 *
 * <p>An action that times out keeps running to its end (its lease is closed by its own {@code
 * try}); only its answer is dropped.
 */
final class RequestRunner {

  /** An action whose result is the whole response; runs once, on a worker thread. */
  @FunctionalInterface
  interface Action {
    HttpResult run() throws Exception;
  }

  /**
   * An action that starts the response (on the HTTP thread or a worker) and may finish it elsewhere
   * (a model's executor); {@code deadlineNanos} is the {@link System#nanoTime()} instant the
   * request times out. When the request is answered otherwise (timeout, shutdown), the returned
   * future is cancelled. With {@code mayRunModel}, the action may run its model on its own thread
   * before it returns (no hand-off); at most half as many actions as there are workers are given
   * that leave at once, so runs of slow or stalled models never hold every thread.
   */
  @FunctionalInterface
  interface AsyncAction {
    CompletableFuture<HttpResult> start(long deadlineNanos, boolean mayRunModel) throws Exception;
  }

  private static final Duration BUSY_RETRY = Duration.ofSeconds(1);
  private static final AtomicInteger POOLS = new AtomicInteger();

  private final ThreadPoolExecutor workers;

  /** Leaves for async actions to run their model on their own thread: half the workers' count. */
  private final Semaphore modelRuns;

  private final Duration timeout;
  private final ErrorMapper errors;
  private final java.util.Set<CompletableFuture<HttpResult>> pending =
      java.util.concurrent.ConcurrentHashMap.newKeySet();

  RequestRunner(int threads, Duration timeout, ErrorMapper errors) {
    int pool = POOLS.incrementAndGet();
    AtomicInteger ids = new AtomicInteger();
    this.workers =
        IdleFirstPool.create(
            threads,
            Math.max(64, threads * 16),
            30,
            r -> {
              Thread t = new Thread(r, "modelkeeper-worker-" + pool + "-" + ids.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    this.modelRuns = new Semaphore(Math.max(1, threads / 2));
    this.timeout = timeout;
    this.errors = errors;
  }

  /**
   * Answers {@code ctx} with what {@code action} returns or throws on a worker thread. The worker
   * holds the request's bytes ({@link RequestBody#bytes()}) while it runs, and skips an action
   * whose request was abandoned while it was queued.
   */
  void submit(Context ctx, Action action) {
    String requestId = RequestIds.of(ctx);
    RequestBytes bytes = RequestBody.of(ctx).bytes();
    CompletableFuture<HttpResult> outcome = new CompletableFuture<>();
    pending.add(outcome);
    outcome.whenComplete((r, f) -> pending.remove(outcome));
    bytes.retain();
    try {
      workers.execute(
          () -> {
            try {
              bytes.checkNotAbandoned();
              outcome.complete(action.run());
            } catch (Throwable t) {
              outcome.completeExceptionally(t);
            } finally {
              bytes.release();
            }
          });
    } catch (RejectedExecutionException busy) {
      bytes.release();
      outcome.completeExceptionally(busy());
    }
    answer(ctx, outcome, requestId);
  }

  private void answer(Context ctx, CompletableFuture<HttpResult> outcome, String requestId) {
    ctx.future(
        () ->
            outcome
                .orTimeout(timeout.toNanos(), TimeUnit.NANOSECONDS)
                .handle(
                    (result, failure) -> {
                      HttpResult r =
                          failure == null ? result : errors.toResult(timedOut(failure), requestId);
                      r.writeTo(ctx);
                      return null;
                    }));
  }

  /**
   * Like {@link #submit}, for an action that returns a future: the request's bytes are held until
   * it is answered. The action starts on the calling HTTP thread when it may run its model there (a
   * leave is free), so a request that finds its model free is decoded, run and answered without a
   * thread hand-off; otherwise it starts on a worker, which is free as soon as the action has
   * started its future.
   */
  void submitAsync(Context ctx, AsyncAction action) {
    long deadline = System.nanoTime() + timeout.toNanos();
    String requestId = RequestIds.of(ctx);
    RequestBytes bytes = RequestBody.of(ctx).bytes();
    CompletableFuture<HttpResult> outcome = new CompletableFuture<>();
    pending.add(outcome);
    bytes.retain();
    outcome.whenComplete(
        (r, f) -> {
          pending.remove(outcome);
          bytes.release();
        });
    if (modelRuns.tryAcquire()) {
      try {
        start(action, deadline, true, bytes, outcome);
      } finally {
        modelRuns.release();
      }
    } else {
      try {
        workers.execute(
            () -> {
              boolean mayRunModel = modelRuns.tryAcquire();
              try {
                start(action, deadline, mayRunModel, bytes, outcome);
              } finally {
                if (mayRunModel) {
                  modelRuns.release();
                }
              }
            });
      } catch (RejectedExecutionException busy) {
        outcome.completeExceptionally(busy());
      }
    }
    answer(ctx, outcome, requestId);
  }

  /** Starts {@code action} and completes {@code outcome} with its future's result. */
  private static void start(
      AsyncAction action,
      long deadline,
      boolean mayRunModel,
      RequestBytes bytes,
      CompletableFuture<HttpResult> outcome) {
    try {
      bytes.checkNotAbandoned();
      CompletableFuture<HttpResult> started = action.start(deadline, mayRunModel);
      started.whenComplete(
          (r, t) -> {
            if (t != null) {
              outcome.completeExceptionally(t);
            } else {
              outcome.complete(r);
            }
          });
      outcome.whenComplete((r, t) -> started.cancel(false)); // a no-op once it completed
    } catch (Throwable t) {
      outcome.completeExceptionally(t);
    }
  }

  /**
   * Why a task could not be queued: the pool is shutting down, or every worker and slot is taken.
   */
  private UnavailableException busy() {
    return new UnavailableException(
        workers.isShutdown()
            ? "the server is shutting down"
            : "all " + workers.getMaximumPoolSize() + " workers are busy and their queue is full",
        BUSY_RETRY);
  }

  /**
   * Runs {@code action} on a worker for a caller that is not an HTTP request (a gRPC call). The
   * future fails with {@link UnavailableException} when every worker and queue slot is taken or the
   * action outlives the request timeout; cancelling it interrupts the action (a call whose client
   * left or whose deadline passed stops waiting for loads and leases).
   */
  <T> CompletableFuture<T> call(Callable<T> action) {
    CompletableFuture<T> outcome = new CompletableFuture<>();
    Future<?> task;
    try {
      task =
          workers.submit(
              () -> {
                try {
                  outcome.complete(action.call());
                } catch (Throwable t) {
                  outcome.completeExceptionally(t);
                }
              });
    } catch (RejectedExecutionException busy) {
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
  <T> CompletableFuture<T> withinTimeout(CompletableFuture<T> outcome) {
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

  /**
   * Answers every request still waiting for its worker's result with {@code failure} now (at the
   * end of the shutdown grace); their actions run on, but their answers are dropped.
   */
  void answerPending(RuntimeException failure) {
    for (CompletableFuture<HttpResult> f : pending) {
      f.completeExceptionally(failure);
    }
  }

  /** How long a request may take before it is answered 503. */
  Duration timeout() {
    return timeout;
  }

  /** Runs a task that is not tied to a request (preloading) on the same workers. */
  CompletableFuture<Void> background(Runnable task) {
    return CompletableFuture.runAsync(task, workers);
  }

  private Throwable timedOut(Throwable failure) {
    if (failure instanceof TimeoutException) {
      return new UnavailableException(
          "the request did not finish within the request timeout of " + timeout, BUSY_RETRY);
    }
    return failure;
  }

  /** Stops taking work and waits up to {@code grace} for running actions; true when all ended. */
  boolean shutdown(Duration grace) {
    workers.shutdown();
    try {
      if (workers.awaitTermination(grace.toNanos(), TimeUnit.NANOSECONDS)) {
        return true;
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    workers.shutdownNow();
    return false;
  }
}
