package dev.modelkeeper.server.engine;

import dev.modelkeeper.onnx.Tensor;
import dev.modelkeeper.server.errors.UnavailableException;
import dev.modelkeeper.server.execution.Execution;
import dev.modelkeeper.server.execution.ExecutionListener;
import dev.modelkeeper.server.execution.Outcome;
import dev.modelkeeper.server.request.InferRequest;
import dev.modelkeeper.server.request.ModelTarget;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The one inference path of the server, whatever the transport (JSON REST, binary REST, gRPC):
 * resolve the model name, lease the model (loading it on demand), run it, release the lease, and
 * hand the outputs back for the transport to encode. Transports decode their request into an {@link
 * InferRequest} (bounded by the front door's limits) before calling {@link #infer}, on a thread
 * that may block. Thread-safe.
 *
 * <p>The step between "lease" and "run" is the per-model {@link Execution} (a queue with a
 * concurrency limit, a dynamic batcher that runs several requests under one lease).
 */
public final class InferenceService {

  /**
   * An answer ready to encode.
   *
   * @param modelName the name the client asked for
   * @param request the request it answers
   * @param outcome the model's outputs
   */
  public record Result(String modelName, InferRequest request, Outcome outcome) {}

  private final ModelResolver resolver;
  private final ModelEvents events;
  private final Execution async;
  private final Duration timeout;
  private final ExecutionListener.Factory listeners;

  /**
   * Requests run through {@code async}; {@link #infer} waits for an answer up to {@code timeout};
   * {@code listeners} hears of each answer.
   */
  public InferenceService(
      ModelResolver resolver,
      ModelEvents events,
      Execution async,
      Duration timeout,
      ExecutionListener.Factory listeners) {
    this.resolver = resolver;
    this.events = events;
    this.async = async;
    this.timeout = timeout;
    this.listeners = listeners;
  }

  /**
   * Starts {@code request} on {@code target} without blocking the caller when execution is queued
   * (else runs it now); cancelling the returned future withdraws a queued request. {@code
   * deadlineNanos} is the nanoTime instant the request times out. A request that can run at once on
   * a model whose runs typically take at most {@code runHereUpToNanos} ({@link Execution#ANY_RUN},
   * {@link Execution#NO_RUN} or a bound) runs on the calling thread (no hand-off) before this
   * returns.
   */
  CompletableFuture<Result> inferAsync(
      String name,
      ModelTarget target,
      InferRequest request,
      long deadlineNanos,
      long runHereUpToNanos) {
    CompletableFuture<Outcome> started =
        async.start(target, request, deadlineNanos, runHereUpToNanos);
    CompletableFuture<Result> result = started.thenApply(o -> result(name, target, request, o));
    result.whenComplete(
        (r, t) -> {
          started.cancel(false); // withdraws it when the caller cancels
          listeners.answered();
        });
    return result;
  }

  /**
   * Waits for queued execution, at most until the request's deadline; a request that can run at
   * once runs on the waiting thread, since it would only wait for another thread to run it.
   */
  private Outcome run(ModelTarget target, InferRequest request) {
    long deadline = System.nanoTime() + timeout.toNanos();
    CompletableFuture<Outcome> f = async.start(target, request, deadline, Execution.ANY_RUN);
    try {
      return f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      f.cancel(false);
      Thread.currentThread().interrupt();
      throw new UnavailableException(
          "interrupted while queued for the model", Duration.ofSeconds(1));
    } catch (TimeoutException e) {
      f.cancel(false);
      throw new UnavailableException(
          "the request did not finish within the request timeout of " + timeout,
          Duration.ofSeconds(1));
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof RuntimeException) {
        throw (RuntimeException) cause;
      }
      if (cause instanceof Error) {
        throw (Error) cause;
      }
      throw new IllegalStateException(cause);
    }
  }

  /**
   * The target of model {@code name} (version {@code version}, or null for the default) when
   * resolving it needs no read of the repository, else null.
   */
  ModelTarget resolveWithoutReading(String name, String version) {
    return resolver.resolveWithoutReading(name, version);
  }

  /**
   * Runs {@code request} on model {@code name} (version {@code version}, or null for the default).
   *
   * @throws dev.modelkeeper.core.ModelNotFoundException when the name is unknown
   * @throws dev.modelkeeper.onnx.InvalidInputException when the inputs do not fit the model
   */
  Result infer(String name, String version, InferRequest request) {
    return infer(name, resolver.resolve(name, version), request);
  }

  /** Runs {@code request} on {@code target}, which the client named {@code name}. */
  Result infer(String name, ModelTarget target, InferRequest request) {
    try {
      return result(name, target, request, run(target, request));
    } finally {
      listeners.answered();
    }
  }

  /** The result of a run, with the outputs asked for as classes ranked. */
  private Result result(String name, ModelTarget target, InferRequest request, Outcome o) {
    request.trace().model(name, o.version());
    if (request.classifications().isEmpty()) {
      return new Result(name, request, o);
    }
    Map<String, Tensor> outputs =
        events.classes(target.key()).apply(o.outputs(), request.classifications());
    return new Result(name, request, new Outcome(o.version(), outputs));
  }
}
