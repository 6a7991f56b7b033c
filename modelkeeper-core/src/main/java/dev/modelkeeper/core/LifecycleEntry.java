package dev.modelkeeper.core;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
import org.jspecify.annotations.Nullable;

/**
 * One generation of one resolved identifier's lifecycle inside {@link BaseModelManager}. See the
 * manager's header for the state machine; this class only holds the state, the flags, the lease
 * count and its place in the LRU order.
 *
 * <p>Guards: {@link #refs} by the manager's map bin of {@link #id} (mutated only inside {@code
 * compute}); {@link #transition}, {@link #holder}, {@link #drained} and the descriptive fields by
 * {@code this}; {@link #phase} and {@link #model} are written under {@code this} and read without
 * it; the LRU {@link #node} by the manager's eviction lock; {@link #flags} is a CAS'd word and the
 * lease count is striped (see below).
 */
final class LifecycleEntry {

  /** Flag: no new leases (the entry is not READY). */
  static final int CLOSED = 0x8000_0000;

  /** Flag: report when the lease count falls to zero. */
  static final int NOTIFY = 0x4000_0000;

  /** {@link #tryLease} result: no lease, and the caller must report the entry idle. */
  static final int REPORT_IDLE = -2;

  /** {@link #tryLease} result: no lease. */
  static final int NO_LEASE = -1;

  private static final int STRIPE_BITS = 3;
  static final int STRIPES = 1 << STRIPE_BITS;

  /** Longs per 128 bytes: one counter per cache-line pair, so stripes never share a line. */
  private static final int PAD = 16;

  final String id;

  /** {@code CLOSED | NOTIFY}; open (non-negative) only while the phase is READY. */
  final AtomicInteger flags = new AtomicInteger(CLOSED);

  /** {@link #recordUse} stripe of the uses the manager records itself (a load, an idle check). */
  static final int OWN_STRIPE = -1;

  /** Offsets in a stripe's slot: the lease count, then the stripe's last recorded use. */
  private static final int STAMP = 1;

  private static final int USED_AT = 2;

  /**
   * Open leases, striped by thread so that leasing one model from several threads writes no shared
   * cache line. A lease increments its stripe and then reads {@link #flags}; a closer sets {@link
   * #flags} and then sums the stripes. Both are sequentially consistent, so either the lease sees
   * CLOSED and backs out or the closer sees the lease.
   *
   * <p>Each stripe's slot also holds the recency stamp and ticker time of the last use drained from
   * that stripe's threads (guarded by the manager's eviction lock, see {@link AccessOrder}); the
   * slot of {@link #OWN_STRIPE}, before the first stripe, holds the manager's own.
   */
  private final AtomicLongArray stripes = new AtomicLongArray((STRIPES + 1) * PAD);

  /** Null while absent (a retired generation stays absent forever). */
  volatile @Nullable ModelState phase;

  /** Non-null from a successful construction until {@code clearCache()} has returned. */
  volatile @Nullable Model model;

  /** This entry's membership of the manager's LRU order (guarded by its eviction lock). */
  final AccessOrder.Node node = new AccessOrder.Node(this);

  /** Callers that reserved this generation and have not left; written only under the map bin. */
  volatile int refs;

  /** Completes when the current LOADING, DRAINING or UNLOADING phase ends. */
  @GuardedBy("this")
  @Nullable CompletableFuture<Void> transition;

  /** Which operation owns the lifecycle now, for diagnostics. */
  @GuardedBy("this")
  @Nullable String holder;

  /** Completed by the closer of the last lease while a removal drains. */
  @GuardedBy("this")
  @Nullable CompletableFuture<Void> drained;

  @GuardedBy("this")
  @Nullable String requestedId;

  /** Written under {@code this}; read without it for the manager's totals. */
  volatile long sizeBytes = -1;

  @GuardedBy("this")
  long loadNanos;

  LifecycleEntry(String id) {
    this.id = id;
  }

  /** The lease-count stripe of a thread: consecutive thread IDs spread over all stripes. */
  static int stripeOf(long threadId) {
    return stripeOfHash(threadId * 0x9E37_79B9_7F4A_7C15L);
  }

  /** The stripe of a thread whose ID hashes (as in {@link #stripeOf}) to {@code hash}. */
  static int stripeOfHash(long hash) {
    return (int) (hash >>> (64 - STRIPE_BITS));
  }

  private static int slot(int stripe) {
    return (stripe + 1) * PAD;
  }

  /**
   * Records a use by the threads of {@code stripe} (or {@link #OWN_STRIPE}) with its recency stamp
   * and ticker time; under the manager's eviction lock.
   */
  void recordUse(int stripe, long stamp, long now) {
    int at = slot(stripe);
    stripes.setPlain(at + STAMP, stamp);
    stripes.setPlain(at + USED_AT, now);
  }

  /** The stamp of the last recorded use, 0 if none; under the manager's eviction lock. */
  long lastStamp() {
    return stripes.getPlain(slot(lastStripe()) + STAMP);
  }

  /** The ticker time of the last recorded use; under the manager's eviction lock. */
  long lastUsedAt() {
    return stripes.getPlain(slot(lastStripe()) + USED_AT);
  }

  private int lastStripe() {
    int last = OWN_STRIPE;
    for (int s = 0; s < STRIPES; s++) {
      if (stripes.getPlain(slot(s) + STAMP) > stripes.getPlain(slot(last) + STAMP)) {
        last = s;
      }
    }
    return last;
  }

  /**
   * Grants a lease when the entry is READY: lock-free, allocation-free, no shared write. Returns
   * the stripe to release later, or {@link #NO_LEASE}, or {@link #REPORT_IDLE}.
   */
  int tryLease() {
    int stripe = stripeOf(Thread.currentThread().getId());
    stripes.getAndIncrement(slot(stripe));
    if (flags.get() >= 0) {
      return stripe;
    }
    return releaseLease(stripe) ? REPORT_IDLE : NO_LEASE;
  }

  /** Releases a lease of {@code stripe}; true when the caller must report the entry idle. */
  boolean releaseLease(int stripe) {
    stripes.getAndDecrement(slot(stripe));
    for (int f = flags.get(); (f & NOTIFY) != 0 && leases() == 0; f = flags.get()) {
      if (flags.compareAndSet(f, f & ~NOTIFY)) {
        return true;
      }
    }
    return false;
  }

  /** Opens the entry for leases (phase becomes READY), keeping a pending idle request. */
  void openLeases() {
    flags.getAndUpdate(f -> f & ~CLOSED);
  }

  /** Closes the entry to new leases; returns the number still open. */
  int closeLeases() {
    flags.getAndUpdate(f -> f | CLOSED);
    return leases();
  }

  /** Closes the entry only if no lease is open; otherwise asks for an idle report. */
  boolean closeIfIdle() {
    flags.getAndUpdate(f -> f | CLOSED | NOTIFY);
    if (leases() == 0) {
      flags.set(CLOSED);
      return true;
    }
    flags.getAndUpdate(f -> f & ~CLOSED);
    return false;
  }

  /** Asks the closer of the last lease to report. */
  void requestIdleReport() {
    flags.getAndUpdate(f -> f | NOTIFY);
  }

  int leases() {
    long n = 0;
    for (int i = 0; i < STRIPES; i++) {
      n += stripes.get(slot(i));
    }
    return (int) n;
  }

  /** Starts a transition; the caller holds {@code this}. */
  @GuardedBy("this")
  void begin(ModelState next, String operation) {
    phase = next;
    holder = operation;
    transition = new CompletableFuture<>();
  }

  /**
   * Ends the current transition; the caller holds {@code this} and completes the result after
   * unlocking.
   */
  @GuardedBy("this")
  CompletableFuture<Void> end(@Nullable ModelState next) {
    CompletableFuture<Void> done = Objects.requireNonNull(transition, "no transition to end");
    transition = null;
    holder = null;
    phase = next;
    return done;
  }
}
