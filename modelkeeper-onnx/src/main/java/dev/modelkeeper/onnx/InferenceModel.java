package dev.modelkeeper.onnx;

import dev.modelkeeper.core.Model;
import dev.modelkeeper.core.ModelNotLoadedException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A loaded model that answers tensor requests; the type the HTTP server casts leased models to.
 * Implementations are thread-safe: {@link #infer} may run on many threads at once, and {@link
 * #clearCache()} waits for running inferences before it releases the model.
 */
public interface InferenceModel extends Model {

  /** The model's name, version, platform and declared inputs and outputs; cheap, never blocks. */
  ModelMetadata metadata();

  /**
   * Runs the model.
   *
   * @param inputs every input the model declares, keyed by input name (each key equals its tensor's
   *     {@link Tensor#name()})
   * @param requestedOutputs output names to return; an empty set (or null) returns all outputs
   * @return the requested outputs keyed by name, in the model's output order
   * @throws InvalidInputException for an unknown, missing or mistyped input, a shape the model
   *     cannot take, or an unknown requested output
   * @throws ModelNotLoadedException when called after {@link #clearCache()}
   * @throws InferenceException when the runtime fails on valid inputs
   */
  Map<String, Tensor> infer(Map<String, Tensor> inputs, Set<String> requestedOutputs);

  /**
   * As {@link #infer(Map, Set)}, noting in {@code phases} when the inputs were ready for the
   * runtime and when its run ended; the default notes nothing.
   */
  default Map<String, Tensor> infer(
      Map<String, Tensor> inputs, Set<String> requestedOutputs, RunPhases phases) {
    return infer(inputs, requestedOutputs);
  }

  /**
   * The repository config the model was loaded with (its execution settings tell the server how to
   * batch and run it); {@link ModelConfig#EMPTY} by default. Cheap, never blocks.
   */
  default ModelConfig config() {
    return ModelConfig.EMPTY;
  }

  /**
   * Whether several requests batched together reach this model as they are, in one {@link
   * #inferEach} call (Triton's Python backend hands {@code execute} a list of requests), rather
   * than concatenated along their batch dimension into one {@link #infer} call.
   */
  default boolean takesRequestsTogether() {
    return false;
  }

  /**
   * Runs several requests in one call, for a model that {@link #takesRequestsTogether()}: the
   * outputs of each, in order. By default each runs on its own.
   *
   * @throws InvalidInputException or {@link InferenceException} when one of them fails (the caller
   *     may then run each alone to answer each)
   */
  default List<Map<String, Tensor>> inferEach(
      List<Map<String, Tensor>> inputs, Set<String> requestedOutputs) {
    List<Map<String, Tensor>> out = new ArrayList<>(inputs.size());
    for (Map<String, Tensor> in : inputs) {
      out.add(infer(in, requestedOutputs));
    }
    return out;
  }

  /**
   * The working memory, in bytes, one run of {@code rows} rows takes on top of {@link #sizeBytes()}
   * (the first dimension of a batched request; 1 otherwise); 0 when unknown. Cheap, never blocks.
   */
  default long workingBytes(int rows) {
    return 0;
  }

  /** Runs the model and returns every output. */
  default Map<String, Tensor> infer(Map<String, Tensor> inputs) {
    return infer(inputs, Set.of());
  }
}
