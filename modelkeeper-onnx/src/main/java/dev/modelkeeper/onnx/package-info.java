/**
 * ONNX models for ModelKeeper and the model repository they come from.
 *
 * <h2>Inference API (framework-free)</h2>
 *
 * <ul>
 *   <li>{@link dev.modelkeeper.onnx.InferenceModel} — what a leased model is cast to: {@code
 *       metadata()} and {@code infer(Map<String, Tensor> inputs, Set<String> requestedOutputs)}.
 *   <li>{@link dev.modelkeeper.onnx.Tensor} — name, {@link dev.modelkeeper.onnx.Datatype}, {@code
 *       long[]} shape, flat typed data; {@code Tensor.fromValues} builds one from JSON lists and
 *       {@code toList()} gives JSON-friendly values.
 *   <li>{@link dev.modelkeeper.onnx.ModelMetadata} and {@link dev.modelkeeper.onnx.TensorSpec} —
 *       the Open Inference Protocol model metadata ({@code -1} = dynamic dimension).
 *   <li>Errors: {@link dev.modelkeeper.onnx.InvalidInputException} (bad request, 400), {@link
 *       dev.modelkeeper.onnx.InvalidModelIdException} (bad identifier, 400), {@link
 *       dev.modelkeeper.onnx.InferenceException} (runtime failure, 500), core's {@code
 *       ModelNotFoundException} for unknown identifiers (404) and the download errors of {@link
 *       dev.modelkeeper.onnx.remote}.
 * </ul>
 *
 * <h2>Repository</h2>
 *
 * <p>A repository holds {@code <root>/<name>/<version>/model.onnx} and optionally {@code
 * config.json} ({@link dev.modelkeeper.onnx.ModelConfig}). Model identifiers are {@code name} (the
 * highest version) or {@code name/version} ({@link dev.modelkeeper.onnx.ModelId}). {@link
 * dev.modelkeeper.onnx.RepositoryModelRegistry} is the core {@code ModelRegistry} over a {@link
 * dev.modelkeeper.onnx.ModelRepository}: {@link dev.modelkeeper.onnx.LocalModelRepository} for a
 * folder, {@link dev.modelkeeper.onnx.remote.HttpModelRepository} for an HTTP store; {@link
 * dev.modelkeeper.onnx.ModelRepositories#open} picks one from a folder or URL. The demo repository
 * and the ONNX writer live in the {@code modelkeeper-demo} module.
 */
package dev.modelkeeper.onnx;
