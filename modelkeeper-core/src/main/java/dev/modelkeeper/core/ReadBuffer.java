package dev.modelkeeper.core;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Read events of leases, striped by thread and lossy: the recency half of the hot path. A lease
 * records the serial of its entry's LRU node in its thread's stripe with a plain store and a
 * release store of the stripe's tail: no atomic read-modify-write, no reference stored, and no word
 * shared by all threads. Whoever holds the manager's eviction lock applies the recorded events to
 * the LRU order: one stripe when its producer finds it full, every stripe before a victim is
 * chosen. Thread-safe for any number of producers and one drainer at a time (the caller of the
 * drain methods holds the eviction lock).
 *
 * <p>Lossy by design: two threads of one stripe may overwrite each other's event, and an event
 * offered to a full stripe whose producer cannot take the lock at once is dropped. A lost event
 * only makes the LRU order less exact; it never affects correctness, since {@link
 * AccessOrder#touch} ignores a serial that names no linked node. A node is unlinked only after its
 * last lease closed, so no event names it later, and the manager drains every stripe before it
 * links a node (which may reuse the serial of an unlinked one): no event of an unlinked node is
 * applied to its successor.
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

  private static final VarHandle ELEMENTS = MethodHandles.arrayElementVarHandle(int[].class);
  private static final VarHandle COUNTERS = MethodHandles.arrayElementVarHandle(long[].class);

  private final int stripes;
  private final int stripeShift;

  /**
   * Stripe {@code s} owns elements from {@code (s + 1) * ELEMENT_STRIDE}: serials of {@link
   * AccessOrder} nodes, not references, so that recording a read stores no reference (whose
   * garbage-collector barrier would cost as much as an atomic instruction).
   */
  private final int[] elements;

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
    this.elements = new int[(stripes + 1) * ELEMENT_STRIDE];
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
   * Records a read of the node with {@code serial} in stripe {@code s}; returns false when that
   * stripe is full (the event is not recorded: the caller should drain the stripe, or drop it).
   */
  boolean offer(int s, int serial) {
    int c = (s + 1) * COUNTER_STRIDE;
    long tail = (long) COUNTERS.getOpaque(counters, c + TAIL);
    if (tail - (long) COUNTERS.getOpaque(counters, c) >= CAPACITY) {
      return false;
    }
    ELEMENTS.setOpaque(elements, (s + 1) * ELEMENT_STRIDE + (int) (tail & MASK), serial);
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
        order.touch((int) ELEMENTS.getAcquire(elements, e + (int) (i & MASK)), leaseStripe, now);
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
