package dev.modelkeeper.core;

import org.jspecify.annotations.Nullable;

/**
 * A snapshot of one model known to a manager.
 *
 * @param modelId the resolved identifier
 * @param requestedModelId the identifier the model was built from (differs when loaded by alias)
 * @param state where its lifecycle stands
 * @param sizeBytes resident bytes, or a negative number when unknown
 * @param leases open leases at the time of the snapshot
 * @param lastUsed recency stamp of the last load, warm add or lease: larger is more recent
 * @param loadNanos how long its constructor took, 0 while loading
 */
public record ModelDescription(
    String modelId,
    @Nullable String requestedModelId,
    ModelState state,
    long sizeBytes,
    int leases,
    long lastUsed,
    long loadNanos) {}
