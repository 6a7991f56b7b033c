package dev.modelkeeper.core;

import java.util.Map;

/**
 * An immutable snapshot of a manager's counters (monotonic since start) and gauges (current).
 *
 * @param loads constructors that returned a model
 * @param loadFailures loads that failed (constructor threw, refused by a budget)
 * @param loadNanosTotal summed constructor time of successful loads
 * @param removals explicit removals that cleared a model
 * @param evictions models cleared to make room, by cause
 * @param leaseWaits leases that had to wait for a load or transition
 * @param capacityWaits loads that waited for room in a budget
 * @param capacityRejections loads refused for lack of room
 * @param residentModels registered models now
 * @param residentBytes bytes of registered models now (unknown sizes count 0)
 * @param activeLeases open leases now
 */
public record ManagerStats(
    long loads,
    long loadFailures,
    long loadNanosTotal,
    long removals,
    Map<RemovalCause, Long> evictions,
    long leaseWaits,
    long capacityWaits,
    long capacityRejections,
    int residentModels,
    long residentBytes,
    long activeLeases) {

  public ManagerStats {
    evictions = Map.copyOf(evictions);
  }

  public long evictionsTotal() {
    return evictions.values().stream().mapToLong(Long::longValue).sum();
  }

  /** This snapshot with a budget's capacity counters added. */
  public ManagerStats plusCapacity(long waits, long rejections) {
    return new ManagerStats(
        loads,
        loadFailures,
        loadNanosTotal,
        removals,
        evictions,
        leaseWaits,
        capacityWaits + waits,
        capacityRejections + rejections,
        residentModels,
        residentBytes,
        activeLeases);
  }
}
