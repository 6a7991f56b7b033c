/**
 * Triton's shared memory extensions over REST: {@code /v2/systemsharedmemory/...} registers,
 * unregisters and reports regions of the shm room; {@code /v2/cudasharedmemory/...} answers that
 * this server has no CUDA memory. A transport: uses the http, auth and shm rooms.
 */
package dev.modelkeeper.server.sharedmemory;
