/**
 * Triton's system shared memory extension, whatever the transport: regions of POSIX shared memory
 * under {@code /dev/shm} that a client on this machine registers by name ({@code
 * SharedMemoryRegions}), input tensors copied out of them and outputs written into them, every
 * offset and size checked against the region. Uses the errors and request rooms and onnx's tensors;
 * the REST and gRPC transports map their messages onto it.
 */
package dev.modelkeeper.server.sharedmemory;
