package dev.modelkeeper.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The waits for room in one byte budget that are in progress: who waits, for what, since when, and
 * whether it holds a lease while it waits. Not thread-safe: its budget guards it with its lock, and
 * every method is called holding that lock.
 */
final class RoomWaits {

  /** A wait longer than this is a stall: it is logged once, naming who holds the room. */
  static final long STALL_NANOS = TimeUnit.SECONDS.toNanos(1);

  /** One wait in progress. */
  static final class Waiter {
    final String modelId;
    final boolean load;
    final long bytes;
    final long since;
    final boolean holdsLease;
    boolean reported;

    /** The models found leased by the waiter's last search for a victim. */
    List<String> leased = List.of();

    private Waiter(String modelId, boolean load, long bytes, long since, boolean holdsLease) {
      this.modelId = modelId;
      this.load = load;
      this.bytes = bytes;
      this.since = since;
      this.holdsLease = holdsLease;
    }

    String what() {
      return (load ? "a load of '" : "a run of '") + modelId + "'";
    }
  }

  private final Set<Waiter> waiting = Collections.newSetFromMap(new IdentityHashMap<>());
  private int leaseHolders;

  Waiter enter(String modelId, boolean load, long bytes, long now, boolean holdsLease) {
    Waiter w = new Waiter(modelId, load, bytes, now, holdsLease);
    waiting.add(w);
    if (holdsLease) {
      leaseHolders++;
    }
    return w;
  }

  void leave(Waiter w) {
    if (waiting.remove(w) && w.holdsLease) {
      leaseHolders--;
    }
  }

  /** How many waiters hold a lease while they wait. */
  int leaseHolders() {
    return leaseHolders;
  }

  List<MemoryWait> snapshot(long now) {
    List<MemoryWait> all = new ArrayList<>(waiting.size());
    for (Waiter w : waiting) {
      all.add(
          new MemoryWait(
              w.modelId, w.load, w.bytes, Duration.ofNanos(now - w.since), w.holdsLease));
    }
    all.sort((x, y) -> y.waited().compareTo(x.waited()));
    return all;
  }

  /**
   * The one line that says {@code w} stalls: what it waits for, and who holds the budget (runs with
   * their working memory, loads, leased models, the other waiters), after {@code state}.
   */
  String diagnosis(
      Waiter w, long now, String state, Map<String, Long> working, List<String> loads) {
    StringBuilder line =
        new StringBuilder(w.what())
            .append(" has waited ")
            .append(seconds(now - w.since))
            .append(w.bytes > 0 ? " for " + WithFixedSizeCache.mib(w.bytes) : " for a model slot")
            .append(w.load ? (w.bytes > 0 ? " to load" : "") : " of working memory")
            .append(w.holdsLease ? ", holding its lease" : "")
            .append("; held by: ");
    List<String> holders = new ArrayList<>();
    working.forEach((id, b) -> holders.add("runs of '" + id + "' " + WithFixedSizeCache.mib(b)));
    loads.forEach(id -> holders.add("a load of '" + id + "'"));
    if (!w.leased.isEmpty()) {
      holders.add("leases of " + w.leased);
    }
    for (Waiter other : waiting) {
      if (other != w) {
        holders.add(
            "waiting: "
                + other.what()
                + (other.holdsLease ? " holding its lease" : "")
                + " for "
                + seconds(now - other.since));
      }
    }
    line.append(
        holders.isEmpty() ? "nothing but the models' own bytes" : String.join(", ", holders));
    return line.append(" (").append(state).append(")").toString();
  }

  private static String seconds(long nanos) {
    return String.format(Locale.ROOT, "%.1f s", nanos / 1e9);
  }
}
