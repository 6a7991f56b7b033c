/**
 * Observability: Prometheus metrics ({@code ServerMetrics}, Micrometer), OpenTelemetry traces
 * ({@code Tracing}, {@code RequestSpan}), the status board's readings ({@code StatusBoard}) and a
 * rate-limited log line. Implements the execution room's listener and the request room's trace; the
 * only room that imports Micrometer or OpenTelemetry.
 */
package dev.modelkeeper.server.observability;
