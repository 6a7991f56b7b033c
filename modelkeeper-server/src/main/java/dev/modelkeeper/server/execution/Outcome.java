package dev.modelkeeper.server.execution;

import dev.modelkeeper.onnx.Tensor;
import java.util.Map;

/**
 * What a model answered. Immutable by convention (the tensors are shared, not copied).
 *
 * @param version the version of the model that ran
 * @param outputs the outputs keyed by name, in the model's output order
 */
public record Outcome(String version, Map<String, Tensor> outputs) {}
