package dev.modelkeeper.server.execution;

import dev.modelkeeper.server.request.InferRequest;
import dev.modelkeeper.server.request.ModelTarget;
import java.util.concurrent.CompletableFuture;

/**
 * Per-model execution: queues a request on its model's executor and completes later (the server's
 * {@link ModelExecutors}); cancelling the returned future withdraws the request. Implementations
 * are thread-safe and never block, except to run the request on the calling thread when it can run
 * at once and its model's runs typically take at most {@code runHereUpToNanos} (then the future is
 * complete on return).
 */
@FunctionalInterface
public interface Execution {

  /** A caller that may wait for any run of its model on its own thread. */
  long ANY_RUN = Long.MAX_VALUE;

  /** A caller that never runs a model on its own thread. */
  long NO_RUN = -1;

  /**
   * Queues {@code request} on {@code target}; {@code deadlineNanos} is a nanoTime instant; {@code
   * runHereUpToNanos} is {@link #ANY_RUN}, {@link #NO_RUN} or a bound in between.
   */
  CompletableFuture<Outcome> start(
      ModelTarget target, InferRequest request, long deadlineNanos, long runHereUpToNanos);
}
