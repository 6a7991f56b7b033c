package dev.modelkeeper.onnx;

import java.util.Map;
import java.util.Set;

/**
 * How a model calls another one (Triton's business logic scripting): through the server's engine,
 * so that the model called is loaded on demand and leased while it runs, like any request's.
 * Implementations are thread-safe.
 */
@FunctionalInterface
public interface ModelCaller {

  /** A caller for models loaded outside a server: every call is refused. */
  ModelCaller NONE =
      (name, version, inputs, outputs) -> {
        throw new InferenceException(
            "model '" + name + "' cannot be called from another model outside a server", null);
      };

  /**
   * Runs model {@code name} (its {@code version}, or the one the server serves when null or empty)
   * on {@code inputs}; the {@code outputs} asked for (empty: all).
   *
   * @throws RuntimeException the server's failure for the call, with its message
   */
  Map<String, Tensor> infer(
      String name, String version, Map<String, Tensor> inputs, Set<String> outputs);
}
