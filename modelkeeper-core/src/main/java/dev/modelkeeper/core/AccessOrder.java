package dev.modelkeeper.core;

import java.util.ArrayList;
import java.util.List;

/**
 * The exact LRU order of the registered entries of one manager: an intrusive doubly linked list of
 * {@link Node}s, least recently used first. Not thread-safe: the manager guards it with its
 * eviction lock.
 */
final class AccessOrder {

  /**
   * An entry's place in the order. A separate object from the entry, so that reordering writes no
   * cache line that a lease reads. Fields guarded by the manager's eviction lock.
   */
  static final class Node {
    final LifecycleEntry entry;
    Node older;
    Node newer;

    /** In the order: from a successful load until {@code clearCache()} returned. */
    boolean linked;

    /** Ticker time of the last recorded use, as of the last drain. */
    long usedAt;

    /** Recency stamp of the last recorded use, as of the last drain; larger is more recent. */
    long stamp;

    Node(LifecycleEntry entry) {
      this.entry = entry;
    }
  }

  private Node oldest;
  private Node newest;
  private long stamps;

  /** Links a newly registered entry as the most recent; a linked one just moves there. */
  void link(Node n, long now) {
    if (n.linked) {
      touch(n, now);
      return;
    }
    n.linked = true;
    append(n, now);
  }

  /** Moves a linked entry to the most recent end; ignores an entry no longer registered. */
  void touch(Node n, long now) {
    if (!n.linked) {
      return;
    }
    if (newest != n) {
      detach(n);
      append(n, now);
    } else {
      n.usedAt = now;
    }
  }

  void unlink(Node n) {
    if (n.linked) {
      detach(n);
      n.linked = false;
    }
  }

  /** The linked entries, least recently used first. */
  List<LifecycleEntry> snapshot() {
    List<LifecycleEntry> out = new ArrayList<>();
    for (Node n = oldest; n != null; n = n.newer) {
      out.add(n.entry);
    }
    return out;
  }

  private void append(Node n, long now) {
    n.older = newest;
    n.newer = null;
    if (newest == null) {
      oldest = n;
    } else {
      newest.newer = n;
    }
    newest = n;
    n.usedAt = now;
    n.stamp = ++stamps;
  }

  private void detach(Node n) {
    if (n.older == null) {
      oldest = n.newer;
    } else {
      n.older.newer = n.newer;
    }
    if (n.newer == null) {
      newest = n.older;
    } else {
      n.newer.older = n.older;
    }
    n.older = null;
    n.newer = null;
  }
}
