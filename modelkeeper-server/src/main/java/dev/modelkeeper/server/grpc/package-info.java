/**
 * The Open Inference Protocol over gRPC ({@code inference.GRPCInferenceService}), with Triton's
 * repository, system shared memory and streaming methods. A transport: uses the engine and the
 * sharedmemory room, never another transport nor the REST plumbing.
 */
package dev.modelkeeper.server.grpc;
