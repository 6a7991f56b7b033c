package dev.modelkeeper.server.engine;

import dev.modelkeeper.core.ModelLease;
import dev.modelkeeper.core.ModelManager;
import dev.modelkeeper.onnx.InferenceModel;
import dev.modelkeeper.onnx.Tensor;
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
 * <p>The step between "lease" and "run" is an {@link Execution}: the default runs the request at
 * once under its own lease; a per-model executor (a queue with a concurrency limit, a dynamic
 * batcher that runs several requests under one lease) replaces it with {@link #withExecution}.
 */
public final class InferenceService {

  /**
   * Runs one request on a resolved model; the seam for per-model execution. Implementations are
   * thread-safe and release every lease they take before returning.
   */
  @FunctionalInterface
  interface Execution {
    /** Runs {@code request} on {@code target} and returns its outputs with the model's version. */
    Outcome run(ModelTarget target, InferRequest request);
  }

  /**
   * Per-model execution that queues a request and completes later (the server's {@link
   * ModelExecutors}); cancelling the returned future withdraws the request. Implementations are
   * thread-safe and never block, except to run the request on the calling thread when it can run at
   * once and its model's runs typically take at most {@code runHereUpToNanos} (then the future is
   * complete on return).
   */
  @FunctionalInterface
  interface AsyncExecution {
    /**
     * Queues {@code request} on {@code target}; {@code deadlineNanos} is a nanoTime instant; {@code
     * runHereUpToNanos} is {@link #ANY_RUN}, {@link #NO_RUN} or a bound in between.
     */
    CompletableFuture<Outcome> start(
        ModelTarget target, InferRequest request, long deadlineNanos, long runHereUpToNanos);
  }

  /** A caller that may wait for any run of its model on its own thread. */
  static final long ANY_RUN = Long.MAX_VALUE;

  /** A caller that never runs a model on its own thread. */
  static final long NO_RUN = -1;

  /**
   * What a model answered.
   *
   * @param version the version of the model that ran
   * @param outputs the outputs keyed by name, in the model's output order
   */
  public record Outcome(String version, Map<String, Tensor> outputs) {}

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
  private final Execution execution;
  private final AsyncExecution async;

  public InferenceService(
      ModelManager manager, ModelResolver resolver, ModelEvents events, ServerMetrics metrics) {
    this(resolver, events, direct(manager, metrics), null);
  }

  private InferenceService(
      ModelResolver resolver, ModelEvents events, Execution execution, AsyncExecution async) {
    this.resolver = resolver;
    this.events = events;
    this.execution = execution;
    this.async = async;
  }

  /** The same service with {@code execution} between resolving and answering. */
  public InferenceService withExecution(Execution execution) {
    return new InferenceService(resolver, events, execution, null);
  }

  /**
   * The same service with queued execution: {@link #inferAsync} hands requests to {@code async}
   * without blocking, and {@link #infer} waits for its answer, up to {@code timeout}.
   */
  public InferenceService withExecution(AsyncExecution async, Duration timeout) {
    return new InferenceService(resolver, events, blocking(async, timeout), async);
  }

  /**
   * Starts {@code request} on {@code target} without blocking the caller when execution is queued
   * (else runs it now); cancelling the returned future withdraws a queued request. {@code
   * deadlineNanos} is the nanoTime instant the request times out. A request that can run at once on
   * a model whose runs typically take at most {@code runHereUpToNanos} ({@link #ANY_RUN}, {@link
   * #NO_RUN} or a bound) runs on the calling thread (no hand-off) before this returns.
   */
  CompletableFuture<Result> inferAsync(
      String name,
      ModelTarget target,
      InferRequest request,
      long deadlineNanos,
      long runHereUpToNanos) {
    if (async == null) {
      try {
        return CompletableFuture.completedFuture(infer(name, target, request));
      } catch (RuntimeException e) {
        return CompletableFuture.failedFuture(e);
      }
    }
    CompletableFuture<Outcome> started =
        async.start(target, request, deadlineNanos, runHereUpToNanos);
    CompletableFuture<Result> result = started.thenApply(o -> result(name, target, request, o));
    result.whenComplete((r, t) -> started.cancel(false)); // withdraws it when the caller cancels
    return result;
  }

  /**
   * Waits for queued execution, at most until the request's deadline; a request that can run at
   * once runs on the waiting thread, since it would only wait for another thread to run it.
   */
  private static Execution blocking(AsyncExecution async, Duration timeout) {
    return (target, request) -> {
      long deadline = System.nanoTime() + timeout.toNanos();
      CompletableFuture<Outcome> f = async.start(target, request, deadline, ANY_RUN);
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
    };
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
    return result(name, target, request, execution.run(target, request));
  }

  /** The result of a run, with the outputs asked for as classes ranked. */
  private Result result(String name, ModelTarget target, InferRequest request, Outcome o) {
    request.span().set(RequestSpan.MODEL_NAME, name);
    request.span().set(RequestSpan.MODEL_VERSION, o.version());
    if (request.classifications().isEmpty()) {
      return new Result(name, request, o);
    }
    Map<String, Tensor> outputs =
        events.classes(target.key()).apply(o.outputs(), request.classifications());
    return new Result(name, request, new Outcome(o.version(), outputs));
  }

  /** Leases the model for the one request and runs it at once. */
  static Execution direct(ModelManager manager, ServerMetrics metrics) {
    return (target, request) -> {
      try (ModelLease lease = manager.acquire(target.modelId(), null, target.alias())) {
        InferenceModel model = inferenceModel(lease);
        long start = System.nanoTime();
        Map<String, Tensor> outputs = model.infer(request.inputs(), request.outputs());
        metrics.inference(target.key(), System.nanoTime() - start);
        return new Outcome(model.metadata().version(), outputs);
      }
    };
  }

  /** The leased model as an {@link InferenceModel}. */
  static InferenceModel inferenceModel(ModelLease lease) {
    if (!(lease.model() instanceof InferenceModel)) {
      throw new IllegalStateException(
          "model '"
              + lease.modelId()
              + "' is a "
              + lease.model().getClass().getName()
              + ", which cannot run inference");
    }
    return (InferenceModel) lease.model();
  }
}
