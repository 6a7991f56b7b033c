/**
 * The system shared memory extension inside Open Inference Protocol REST requests: a tensor's
 * {@code shared_memory_*} parameters read from JSON. Part of the oip transport; uses the request
 * room's {@code SharedMemoryRef}.
 */
package dev.modelkeeper.server.oip.shm;
