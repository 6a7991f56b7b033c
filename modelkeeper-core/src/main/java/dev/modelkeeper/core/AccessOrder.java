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

  /**
   * An entry's membership of the order. Its serial is written under the manager's eviction lock,
   * from linking (before the entry first becomes READY) until unlinking (after its last lease), so
   * a thread that holds a lease of the entry reads the current value without the lock.
   */
  static final class Node {
    final LifecycleEntry entry;

    /** Its number in the order, from 1; 0 when not in the order. Reused after an unlink. */
    int serial;

    Node(LifecycleEntry entry) {
      this.entry = entry;
    }
  }

  /** The linked nodes by serial (index 0 unused). */
  private Node[] bySerial = new Node[16];

  private int highestSerial;
  private int[] freeSerials = new int[16];
  private int freeCount;
  private long stamps;

  /**
   * Links a newly registered entry as the most recent (from a successful load until {@code
   * clearCache()} returned); a linked one just becomes the most recent.
   */
  void link(Node n, long now) {
    if (n.serial == 0) {
      int serial = freeCount > 0 ? freeSerials[--freeCount] : ++highestSerial;
      if (serial == bySerial.length) {
        bySerial = Arrays.copyOf(bySerial, 2 * serial);
      }
      bySerial[serial] = n;
      n.serial = serial;
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
    if (n.serial != 0) {
      n.entry.recordUse(stripe, ++stamps, now);
    }
  }

  /** As {@link #touch(Node, int, long)} for the node with {@code serial}; ignores unknown ones. */
  void touch(int serial, int stripe, long now) {
    Node n = serial > 0 && serial < bySerial.length ? bySerial[serial] : null;
    if (n != null) {
      touch(n, stripe, now);
    }
  }

  /**
   * Unlinks {@code n}; its serial goes to the next entry linked, so before that link the caller
   * applies every recorded use that may still name it.
   */
  void unlink(Node n) {
    int serial = n.serial;
    if (serial == 0) {
      return;
    }
    bySerial[serial] = null;
    if (freeCount == freeSerials.length) {
      freeSerials = Arrays.copyOf(freeSerials, 2 * freeCount);
    }
    freeSerials[freeCount++] = serial;
    n.serial = 0;
  }

  /** The linked entries, least recently used first. */
  List<LifecycleEntry> snapshot() {
    List<LifecycleEntry> linked = new ArrayList<>();
    for (int serial = 1; serial <= highestSerial; serial++) {
      if (bySerial[serial] != null) {
        linked.add(bySerial[serial].entry);
      }
    }
    long[] recency = new long[linked.size()];
    Integer[] byRecency = new Integer[recency.length];
    for (int i = 0; i < recency.length; i++) {
      recency[i] = linked.get(i).lastStamp();
      byRecency[i] = i;
    }
    Arrays.sort(byRecency, Comparator.comparingLong(i -> recency[i]));
    List<LifecycleEntry> sorted = new ArrayList<>(recency.length);
    for (int i : byRecency) {
      sorted.add(linked.get(i));
    }
    return sorted;
  }
}
