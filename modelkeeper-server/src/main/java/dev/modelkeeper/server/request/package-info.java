/**
 * An inference request as the engine takes it, whatever the transport: {@code InferRequest}, its
 * resolved {@code ModelTarget}, the tensor rules every transport applies ({@code TensorInputs}),
 * Triton's classification ({@code Classification}), request IDs, and the request's trace seam
 * ({@code RequestTrace}, {@code RequestTracer}, with no-op defaults; the observability room
 * implements them). Uses the errors room and onnx.
 */
package dev.modelkeeper.server.request;
