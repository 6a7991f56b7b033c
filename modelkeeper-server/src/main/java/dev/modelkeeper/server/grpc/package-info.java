/**
 * The Open Inference Protocol over gRPC ({@code inference.GRPCInferenceService}), with Triton's
 * repository methods. A transport: uses the engine, never another transport nor the REST plumbing.
 */
package dev.modelkeeper.server.grpc;
