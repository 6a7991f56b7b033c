/**
 * Triton's system shared memory extension over gRPC: the {@code SystemSharedMemory*} methods (and
 * the {@code CudaSharedMemory*} ones, refused), and the {@code shared_memory_*} parameters of
 * inference messages. Part of the grpc transport; the sharedmemory room keeps the regions.
 */
package dev.modelkeeper.server.grpc.sharedmemory;
