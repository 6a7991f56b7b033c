/**
 * The status page at {@code /} and {@code /v2/status}: models, memory and activity as plain HTML,
 * read from the engine and the status board. A transport: uses the engine, the observability room's
 * board and the http plumbing.
 */
package dev.modelkeeper.server.status;
