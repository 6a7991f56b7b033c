package dev.modelkeeper.server;

import dev.modelkeeper.onnx.Tensor;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * An Open Inference Protocol inference request as the server read it. Immutable and thread-safe.
 *
 * @param id the client's request identifier, echoed in the response; null when not given
 * @param inputs the input tensors keyed by name, in request order
 * @param outputs the requested output names; empty means every output
 */
record InferRequest(String id, Map<String, Tensor> inputs, Set<String> outputs) {

  InferRequest {
    inputs = Collections.unmodifiableMap(new LinkedHashMap<>(inputs));
    outputs = Set.copyOf(outputs);
  }
}
