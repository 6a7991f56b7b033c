/**
 * Triton's shared memory extensions over REST: {@code /v2/systemsharedmemory/...} registers,
 * unregisters and reports regions of the sharedmemory room; {@code /v2/cudasharedmemory/...}
 * answers that this server has no CUDA memory; and a tensor's {@code shared_memory_*} parameters
 * inside inference requests, read from JSON. Part of the oip transport; uses the http, auth,
 * request and sharedmemory rooms.
 */
package dev.modelkeeper.server.oip.sharedmemory;
