package dev.modelkeeper.server.request;

import dev.modelkeeper.onnx.Tensor;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * An Open Inference Protocol inference request as the server read it, whatever the transport.
 * Immutable and thread-safe.
 *
 * @param id the client's request identifier, echoed in the response; null when not given
 * @param inputs the input tensors keyed by name, in request order
 * @param outputs the requested output names; empty means every output
 * @param binaryOutputs per requested output, whether its data is to be answered in the binary
 *     tensor data extension (the output's {@code binary_data} parameter); outputs not named here
 *     follow {@code binaryByDefault}
 * @param binaryByDefault the request's {@code binary_data_output} parameter
 * @param classifications per requested output that asks for Triton's classification extension (its
 *     {@code classification} parameter), how many of its top classes to answer
 * @param trace the request's trace, where the engine records its steps ({@link RequestTrace#NONE}
 *     when it is not traced)
 * @param sharedOutputs per requested output that the shared memory extension places in a registered
 *     region, where it is to be written; such outputs carry no data in the answer
 */
public record InferRequest(
    String id,
    Map<String, Tensor> inputs,
    Set<String> outputs,
    Map<String, Boolean> binaryOutputs,
    boolean binaryByDefault,
    Map<String, Integer> classifications,
    RequestTrace trace,
    Map<String, SharedMemoryRef> sharedOutputs) {

  public InferRequest {
    trace = trace == null ? RequestTrace.NONE : trace;
    sharedOutputs = Map.copyOf(sharedOutputs);
    inputs = Collections.unmodifiableMap(new LinkedHashMap<>(inputs));
    outputs = Set.copyOf(outputs);
    binaryOutputs = Map.copyOf(binaryOutputs);
    classifications = Map.copyOf(classifications);
  }

  /** A request that is not traced. */
  public InferRequest(
      String id,
      Map<String, Tensor> inputs,
      Set<String> outputs,
      Map<String, Boolean> binaryOutputs,
      boolean binaryByDefault,
      Map<String, Integer> classifications) {
    this(id, inputs, outputs, binaryOutputs, binaryByDefault, classifications, RequestTrace.NONE);
  }

  /** A request with no output in shared memory. */
  public InferRequest(
      String id,
      Map<String, Tensor> inputs,
      Set<String> outputs,
      Map<String, Boolean> binaryOutputs,
      boolean binaryByDefault,
      Map<String, Integer> classifications,
      RequestTrace trace) {
    this(id, inputs, outputs, binaryOutputs, binaryByDefault, classifications, trace, Map.of());
  }

  /** This request, traced in {@code trace}. */
  public InferRequest traced(RequestTrace trace) {
    return new InferRequest(
        id, inputs, outputs, binaryOutputs, binaryByDefault, classifications, trace, sharedOutputs);
  }

  /** This request, with {@code sharedOutputs} written into shared memory. */
  public InferRequest withSharedOutputs(Map<String, SharedMemoryRef> sharedOutputs) {
    return new InferRequest(
        id, inputs, outputs, binaryOutputs, binaryByDefault, classifications, trace, sharedOutputs);
  }

  /** A request that asks for no classification. */
  public InferRequest(
      String id,
      Map<String, Tensor> inputs,
      Set<String> outputs,
      Map<String, Boolean> binaryOutputs,
      boolean binaryByDefault) {
    this(id, inputs, outputs, binaryOutputs, binaryByDefault, Map.of());
  }

  /** A request whose outputs are all answered as JSON. */
  public InferRequest(String id, Map<String, Tensor> inputs, Set<String> outputs) {
    this(id, inputs, outputs, Map.of(), false);
  }

  /** Whether output {@code name} is answered in binary form (REST only). */
  public boolean binaryOutput(String name) {
    return binaryOutputs.getOrDefault(name, binaryByDefault);
  }
}
