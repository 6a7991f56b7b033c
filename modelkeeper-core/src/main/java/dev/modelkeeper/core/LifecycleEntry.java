package dev.modelkeeper.core;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One generation of one resolved identifier's lifecycle inside {@link BaseModelManager}. See the
 * manager's header for the state machine; this class only holds the state and the lease word.
 *
 * <p>Guards: {@link #refs} by the manager's map bin of {@link #id} (mutated only inside {@code
 * compute}); {@link #transition}, {@link #holder}, {@link #drained} and the descriptive fields by
 * {@code this}; {@link #phase} and {@link #model} are written under {@code this} and read without
 * it; {@link #leaseWord} is a CAS'd word (see below).
 */
final class LifecycleEntry {

  /** Lease word flag: no new leases (the entry is not READY). */
  static final int CLOSED = 0x8000_0000;

  /** Lease word flag: report when the lease count falls to zero. */
  static final int NOTIFY = 0x4000_0000;

  /** Lease word bits that count open leases. */
  static final int COUNT = 0x3FFF_FFFF;

  final String id;

  /** {@code CLOSED | NOTIFY | count}; open (non-negative) only while the phase is READY. */
  final AtomicInteger leaseWord = new AtomicInteger(CLOSED);

  /** Null while absent (a retired generation stays absent forever). */
  volatile ModelState phase;

  /** Non-null from a successful construction until {@code clearCache()} has returned. */
  volatile Model model;

  /** Recency stamp of the last load, warm add or lease; larger is more recent. */
  volatile long lastUsed;

  /** Callers that reserved this generation and have not left; written only under the map bin. */
  volatile int refs;

  /** Completes when the current LOADING, DRAINING or UNLOADING phase ends. */
  CompletableFuture<Void> transition;

  /** Which operation owns the lifecycle now, for diagnostics. */
  String holder;

  /** Completed by the closer of the last lease while a removal drains. */
  CompletableFuture<Void> drained;

  String requestedId;
  long sizeBytes = -1;
  long loadNanos;

  LifecycleEntry(String id) {
    this.id = id;
  }

  /** Grants a lease when the entry is READY; lock-free, allocation-free. */
  boolean tryLease() {
    for (; ; ) {
      int w = leaseWord.get();
      if (w < 0) {
        return false;
      }
      if (leaseWord.compareAndSet(w, w + 1)) {
        return true;
      }
    }
  }

  /** Opens the word for leases (phase becomes READY), keeping a pending idle request. */
  void openLeases() {
    for (; ; ) {
      int w = leaseWord.get();
      if (leaseWord.compareAndSet(w, w & ~CLOSED)) {
        return;
      }
    }
  }

  /** Closes the word to new leases; returns the number still open. */
  int closeLeases() {
    return leaseWord.getAndUpdate(w -> w | CLOSED) & COUNT;
  }

  /** Closes the word only if no lease is open; otherwise asks for an idle report. */
  boolean closeIfIdle() {
    for (; ; ) {
      int w = leaseWord.get();
      if ((w & COUNT) == 0) {
        if (leaseWord.compareAndSet(w, w | CLOSED)) {
          return true;
        }
      } else if (leaseWord.compareAndSet(w, w | NOTIFY)) {
        return false;
      }
    }
  }

  /** Asks the closer of the last lease to report. */
  void requestIdleReport() {
    leaseWord.getAndUpdate(w -> w | NOTIFY);
  }

  int leases() {
    return leaseWord.get() & COUNT;
  }

  /** Starts a transition; the caller holds {@code this}. */
  CompletableFuture<Void> begin(ModelState next, String operation) {
    phase = next;
    holder = operation;
    transition = new CompletableFuture<>();
    return transition;
  }

  /** Ends the current transition; the caller holds {@code this} and completes the result after unlocking. */
  CompletableFuture<Void> end(ModelState next) {
    CompletableFuture<Void> done = transition;
    transition = null;
    holder = null;
    phase = next;
    return done;
  }
}
