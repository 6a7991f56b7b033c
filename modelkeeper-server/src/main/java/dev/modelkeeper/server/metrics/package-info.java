/**
 * Triton's metrics: {@code /metrics} on a port of its own ({@code MetricsEndpoint}, the JDK's HTTP
 * server), with Triton's {@code nv_inference_*} counters per model version and {@code nv_cpu_*}
 * readings of the machine ({@code TritonMetrics}, {@code HostReadings}) beside ModelKeeper's own
 * metrics. Uses the engine; knows no other transport and imports no metrics library.
 */
package dev.modelkeeper.server.metrics;
