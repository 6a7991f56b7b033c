package dev.modelkeeper.server;

import dev.modelkeeper.core.ModelLease;
import dev.modelkeeper.core.ModelManager;
import dev.modelkeeper.onnx.InferenceModel;
import dev.modelkeeper.onnx.Tensor;
import java.util.Map;

/**
 * The one inference path of the server, whatever the transport (JSON REST, binary REST, gRPC):
 * resolve the model name, lease the model (loading it on demand), run it, release the lease, and
 * hand the outputs back for the transport to encode. Transports decode their request into an
 * {@link InferRequest} (bounded by the front door's limits) before calling {@link #infer}, on a
 * thread that may block. Thread-safe.
 *
 * <p>The step between "lease" and "run" is an {@link Execution}: the default runs the request at
 * once under its own lease; a per-model executor (a queue with a concurrency limit, a dynamic
 * batcher that runs several requests under one lease) replaces it with {@link
 * #withExecution}.
 */
final class InferenceService {

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
   * What a model answered.
   *
   * @param version the version of the model that ran
   * @param outputs the outputs keyed by name, in the model's output order
   */
  record Outcome(String version, Map<String, Tensor> outputs) {}

  /**
   * An answer ready to encode.
   *
   * @param modelName the name the client asked for
   * @param request the request it answers
   * @param outcome the model's outputs
   */
  record Result(String modelName, InferRequest request, Outcome outcome) {}

  private final ModelResolver resolver;
  private final Execution execution;

  InferenceService(ModelManager manager, ModelResolver resolver, ServerMetrics metrics) {
    this(resolver, direct(manager, metrics));
  }

  private InferenceService(ModelResolver resolver, Execution execution) {
    this.resolver = resolver;
    this.execution = execution;
  }

  /** The same service with {@code execution} between resolving and answering. */
  InferenceService withExecution(Execution execution) {
    return new InferenceService(resolver, execution);
  }

  /**
   * Runs {@code request} on model {@code name} (version {@code version}, or null for the
   * default).
   *
   * @throws dev.modelkeeper.core.ModelNotFoundException when the name is unknown
   * @throws dev.modelkeeper.onnx.InvalidInputException when the inputs do not fit the model
   */
  Result infer(String name, String version, InferRequest request) {
    return infer(name, resolver.resolve(name, version), request);
  }

  /** Runs {@code request} on {@code target}, which the client named {@code name}. */
  Result infer(String name, ModelTarget target, InferRequest request) {
    return new Result(name, request, execution.run(target, request));
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
          "model '" + lease.modelId() + "' is a " + lease.model().getClass().getName()
              + ", which cannot run inference");
    }
    return (InferenceModel) lease.model();
  }
}
