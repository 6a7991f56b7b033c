package dev.modelkeeper.server.http;

import dev.modelkeeper.server.admission.RequestBytes;
import dev.modelkeeper.server.errors.UnavailableException;
import dev.modelkeeper.server.execution.Workers;
import io.javalin.http.Context;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Runs the slow part of HTTP requests on the engine's {@link Workers}, so HTTP threads never block
 * on models, and answers every such request exactly once: with the action's result, with its
 * failure through the {@link ErrorMapper}, or with 503 when it outlives the request timeout or
 * finds every worker and queue slot taken. Thread-safe.
 */
public final class RequestRunner {

  /** An action whose result is the whole response; runs once, on a worker thread. */
  @FunctionalInterface
  public interface Action {
    HttpResult run() throws Exception;
  }

  /**
   * An action that starts the response (on the HTTP thread or a worker) and may finish it elsewhere
   * (a model's executor); {@code deadlineNanos} is the {@link System#nanoTime()} instant the
   * request times out. When the request is answered otherwise (timeout, shutdown), the returned
   * future is cancelled. With {@code mayRunModel}, the action may run its model on its own thread
   * before it returns (no hand-off; see {@link Workers#tryModelRun}).
   */
  @FunctionalInterface
  public interface AsyncAction {
    CompletableFuture<HttpResult> start(long deadlineNanos, boolean mayRunModel) throws Exception;
  }

  private final Workers workers;
  private final ErrorMapper errors;
  private final Set<CompletableFuture<HttpResult>> pending = ConcurrentHashMap.newKeySet();

  public RequestRunner(Workers workers, ErrorMapper errors) {
    this.workers = workers;
    this.errors = errors;
  }

  /**
   * Answers {@code ctx} with what {@code action} returns or throws on a worker thread. The worker
   * holds the request's bytes ({@link RequestBody#bytes()}) while it runs, and skips an action
   * whose request was abandoned while it was queued.
   */
  public void submit(Context ctx, Action action) {
    String requestId = Routes.requestId(ctx);
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
    } catch (UnavailableException busy) {
      bytes.release();
      outcome.completeExceptionally(busy);
    }
    answer(ctx, outcome, requestId);
  }

  private void answer(Context ctx, CompletableFuture<HttpResult> outcome, String requestId) {
    if (outcome.isDone()) {
      // answered already (its model ran on this thread, or it failed at once): written now, with
      // no asynchronous exchange and no timeout to arm
      HttpResult r;
      try {
        r = outcome.join();
      } catch (CompletionException | CancellationException e) {
        Throwable failure = e instanceof CompletionException ? e.getCause() : e;
        r = errors.toResult(workers.timedOut(failure), requestId);
      }
      r.writeTo(ctx);
      return;
    }
    ctx.future(
        () ->
            outcome
                .orTimeout(workers.timeout().toNanos(), TimeUnit.NANOSECONDS)
                .handle(
                    (result, failure) -> {
                      HttpResult r =
                          failure == null
                              ? result
                              : errors.toResult(workers.timedOut(failure), requestId);
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
  public void submitAsync(Context ctx, AsyncAction action) {
    long deadline = System.nanoTime() + workers.timeout().toNanos();
    String requestId = Routes.requestId(ctx);
    RequestBytes bytes = RequestBody.of(ctx).bytes();
    CompletableFuture<HttpResult> outcome = new CompletableFuture<>();
    pending.add(outcome);
    bytes.retain();
    outcome.whenComplete(
        (r, f) -> {
          pending.remove(outcome);
          bytes.release();
        });
    if (workers.tryModelRun()) {
      try {
        start(action, deadline, true, bytes, outcome);
      } finally {
        workers.endModelRun();
      }
    } else {
      try {
        workers.execute(
            () -> {
              boolean mayRunModel = workers.tryModelRun();
              try {
                start(action, deadline, mayRunModel, bytes, outcome);
              } finally {
                if (mayRunModel) {
                  workers.endModelRun();
                }
              }
            });
      } catch (UnavailableException busy) {
        outcome.completeExceptionally(busy);
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
   * Answers every request still waiting for its worker's result with {@code failure} now (at the
   * end of the shutdown grace); their actions run on, but their answers are dropped.
   */
  public void answerPending(RuntimeException failure) {
    for (CompletableFuture<HttpResult> f : pending) {
      f.completeExceptionally(failure);
    }
  }
}
