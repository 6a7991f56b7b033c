/**
 * Inference statistics per model version, as Triton's statistics extension reports them ({@code
 * InferenceStatistics}): requests that succeeded and failed, time queued, preparing inputs, running
 * and reading outputs, per batch size. Counted from what the execution room reports through its
 * listener seam; uses the execution room only; no transport, no wire or observability library.
 */
package dev.modelkeeper.server.statistics;
