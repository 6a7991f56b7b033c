/**
 * The system shared memory extension inside Open Inference Protocol REST requests and answers: a
 * tensor's {@code shared_memory_*} parameters read from JSON, and written back for outputs placed
 * in a region. Part of the oip transport; uses the request room's {@code SharedMemoryRef}.
 */
package dev.modelkeeper.server.oip.shm;
