package dev.modelkeeper.core;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Read events of leases, striped by thread and lossy: the recency half of the hot path. A lease
 * records its entry's LRU node in its thread's stripe with a plain store and a release store of the
 * stripe's tail: no atomic read-modify-write, and no word shared by all threads. Whoever holds the
 * manager's eviction lock applies the recorded events to the LRU order: one stripe when its
 * producer finds it full, every stripe before a victim is chosen. Thread-safe for any number of
 * producers and one drainer at a time (the caller of the drain methods holds the eviction lock).
 *
 * <p>Lossy by design: two threads of one stripe may overwrite each other's event, and an event
 * offered to a full stripe whose producer cannot take the lock at once is dropped. A lost event
 * only makes the LRU order less exact; it never affects correctness, since every element is a valid
 * node and {@link AccessOrder#touch} ignores a node that is no longer linked.
 */
final class ReadBuffer {

  /** Events per stripe (a power of two). */
  static final int CAPACITY = 128;

  private static final int MASK = CAPACITY - 1;

  /** Elements per stripe: its events and a gap, so stripes never share a cache line. */
  private static final int ELEMENT_STRIDE = CAPACITY + 16;

  /** Longs per stripe: head and tail 64 bytes apart, stripes 128 bytes apart. */
  private static final int COUNTER_STRIDE = 16;

  private static final int TAIL = 8;

  private static final VarHandle ELEMENTS = MethodHandles.arrayElementVarHandle(Object[].class);
  private static final VarHandle COUNTERS = MethodHandles.arrayElementVarHandle(long[].class);

  private final int stripes;
  private final int stripeShift;

  /** Stripe {@code s} owns elements from {@code (s + 1) * ELEMENT_STRIDE}. */
  private final Object[] elements;

  /**
   * Stripe {@code s}: head at {@code (s + 1) * COUNTER_STRIDE} (written by the drainer only), tail
   * {@link #TAIL} after it (written by the stripe's producers only).
   */
  private final long[] counters;

  ReadBuffer(int stripes) {
    if (stripes < 2 || Integer.bitCount(stripes) != 1) {
      throw new IllegalArgumentException("stripes must be a power of two above 1, was " + stripes);
    }
    this.stripes = stripes;
    this.stripeShift = 64 - Integer.numberOfTrailingZeros(stripes);
    this.elements = new Object[(stripes + 1) * ELEMENT_STRIDE];
    this.counters = new long[(stripes + 2) * COUNTER_STRIDE];
  }

  /** The stripe count for this machine: four per processor, at least 4 and at most 64. */
  static int stripesForProcessors(int processors) {
    int wanted = Math.max(4, Math.min(64, 4 * processors));
    return Integer.highestOneBit(wanted - 1) << 1;
  }

  /** The calling thread's stripe: consecutive thread IDs spread over all stripes. */
  int stripe() {
    return (int) ((Thread.currentThread().getId() * 0x9E37_79B9_7F4A_7C15L) >>> stripeShift);
  }

  /**
   * Records a read of {@code node} in stripe {@code s}; returns false when that stripe is full (the
   * event is not recorded: the caller should drain the stripe, or drop the event).
   */
  boolean offer(int s, AccessOrder.Node node) {
    int c = (s + 1) * COUNTER_STRIDE;
    long tail = (long) COUNTERS.getOpaque(counters, c + TAIL);
    if (tail - (long) COUNTERS.getOpaque(counters, c) >= CAPACITY) {
      return false;
    }
    ELEMENTS.setOpaque(elements, (s + 1) * ELEMENT_STRIDE + (int) (tail & MASK), (Object) node);
    COUNTERS.setRelease(counters, c + TAIL, tail + 1);
    return true;
  }

  /**
   * The lease-count stripe ({@link LifecycleEntry#stripeOf}) of the threads of stripe {@code s}:
   * both take the top bits of one hash, so with at least as many read stripes as lease stripes this
   * is each of its threads' own lease stripe.
   */
  int leaseStripe(int s) {
    return LifecycleEntry.stripeOfHash((long) s << stripeShift);
  }

  /**
   * Applies the events of stripe {@code s} to {@code order}, oldest first; under the eviction lock.
   */
  void drain(int s, AccessOrder order, long now) {
    int c = (s + 1) * COUNTER_STRIDE;
    long head = counters[c];
    long tail = (long) COUNTERS.getAcquire(counters, c + TAIL);
    long size = tail - head;
    if (size == 0) {
      return;
    }
    if (size > 0 && size <= CAPACITY) {
      int e = (s + 1) * ELEMENT_STRIDE;
      int leaseStripe = leaseStripe(s);
      for (long i = head; i != tail; i++) {
        Object node = ELEMENTS.getAcquire(elements, e + (int) (i & MASK));
        if (node != null) {
          order.touch((AccessOrder.Node) node, leaseStripe, now);
        }
      }
    }
    // racing producers of one stripe may have moved the tail backwards: go on from where it is
    COUNTERS.setRelease(counters, c, tail);
  }

  /** Applies every stripe's events to {@code order}; under the eviction lock. */
  void drainAll(AccessOrder order, long now) {
    for (int s = 0; s < stripes; s++) {
      drain(s, order, now);
    }
  }
}
