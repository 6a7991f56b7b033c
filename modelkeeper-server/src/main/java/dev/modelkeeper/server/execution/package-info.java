/**
 * Where a request waits and runs: one executor per model ({@code ModelExecutor}, {@code
 * ModelExecutors}) with its queue, concurrency limit and dynamic batching ({@code Batches}), the
 * workers that may block ({@code Workers}), and the seam through which it reports ({@code
 * ExecutionListener}, no-op by default). Leases models through core; uses the request and errors
 * rooms; knows nothing of transports, metrics or traces' libraries.
 */
package dev.modelkeeper.server.execution;
