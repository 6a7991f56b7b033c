package dev.modelkeeper.core;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * The exact LRU order of the registered entries of one manager, over the uses recorded so far. Each
 * recorded use gets the next recency stamp; an entry's recency is its largest stamp. The stamps are
 * kept in the entry's lease-count stripes ({@link LifecycleEntry#recordUse}), one per stripe of
 * threads, so that recording the uses drained from a stripe writes only cache lines that the same
 * threads' leases write anyway: no line moves between cores while the order is kept. The order
 * itself is computed only when asked for ({@link #snapshot}), which the manager does when a policy
 * looks for a victim, for diagnostics and for the idle check. Not thread-safe: the manager guards
 * it with its eviction lock.
 */
final class AccessOrder {

  /** An entry's membership of the order; its field is guarded by the manager's eviction lock. */
  static final class Node {
    final LifecycleEntry entry;

    /** Its index in the order's member list; -1 when not in the order. */
    int index = -1;

    Node(LifecycleEntry entry) {
      this.entry = entry;
    }
  }

  private final List<Node> members = new ArrayList<>();
  private long stamps;

  /**
   * Links a newly registered entry as the most recent (from a successful load until {@code
   * clearCache()} returned); a linked one just becomes the most recent.
   */
  void link(Node n, long now) {
    if (n.index < 0) {
      n.index = members.size();
      members.add(n);
    }
    touch(n, LifecycleEntry.OWN_STRIPE, now);
  }

  /** Records a use of {@code n} by the manager itself; ignores an entry no longer registered. */
  void touch(Node n, long now) {
    touch(n, LifecycleEntry.OWN_STRIPE, now);
  }

  /**
   * Records a use of {@code n} by a thread of lease stripe {@code stripe} at ticker time {@code
   * now}; ignores an entry no longer registered.
   */
  void touch(Node n, int stripe, long now) {
    if (n.index >= 0) {
      n.entry.recordUse(stripe, ++stamps, now);
    }
  }

  void unlink(Node n) {
    int i = n.index;
    if (i < 0) {
      return;
    }
    Node last = members.remove(members.size() - 1);
    if (last != n) {
      members.set(i, last);
      last.index = i;
    }
    n.index = -1;
  }

  /** The linked entries, least recently used first. */
  List<LifecycleEntry> snapshot() {
    LifecycleEntry[] out = new LifecycleEntry[members.size()];
    long[] recency = new long[out.length];
    Integer[] byRecency = new Integer[out.length];
    for (int i = 0; i < out.length; i++) {
      out[i] = members.get(i).entry;
      recency[i] = out[i].lastStamp();
      byRecency[i] = i;
    }
    Arrays.sort(byRecency, Comparator.comparingLong(i -> recency[i]));
    List<LifecycleEntry> sorted = new ArrayList<>(out.length);
    for (int i : byRecency) {
      sorted.add(out[i]);
    }
    return sorted;
  }
}
