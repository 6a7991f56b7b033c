package dev.modelkeeper.core;

import java.time.Duration;

/**
 * One wait for room in a byte budget in progress, as {@link WithFixedSizeCache#waits()} reports it.
 * Immutable.
 *
 * @param modelId the resolved identifier of the model that waits
 * @param load true when a load waits for room to load the model, false when a run of it waits for
 *     its working memory
 * @param bytes the bytes it waits for
 * @param waited how long it has waited so far
 * @param holdsLease whether it waits holding a lease of its model (at most one run does)
 */
public record MemoryWait(
    String modelId, boolean load, long bytes, Duration waited, boolean holdsLease) {

  /** What waits, as a log line names it: "a load of 'a'" or "a run of 'a'". */
  public String what() {
    return (load ? "a load of '" : "a run of '") + modelId + "'";
  }
}
