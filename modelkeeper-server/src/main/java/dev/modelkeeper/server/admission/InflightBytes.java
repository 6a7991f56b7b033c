package dev.modelkeeper.server.admission;

import dev.modelkeeper.server.errors.PayloadTooLargeException;
import dev.modelkeeper.server.errors.UnavailableException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The server-wide budget of request bytes in flight: request bodies being received or held, and the
 * tensors decoded from them. Thread-safe.
 *
 * <p>A reservation that fits is granted at once. One that does not fit waits, first come first
 * served, without holding a thread (it is a future), until enough bytes are returned or the
 * admission timeout passes; then it fails with {@link UnavailableException} (503 with {@code
 * Retry-After}). A reservation larger than the whole budget can never be granted and fails at once
 * with {@link PayloadTooLargeException} (413). Futures are completed after the lock is released, on
 * the thread that returned the bytes or on the timer.
 */
public final class InflightBytes {

  private static final Duration RETRY_AFTER = Duration.ofSeconds(1);

  private final long capacity;
  private final Duration maxWait;
  private final ScheduledExecutorService timer;
  private final ReentrantLock lock = new ReentrantLock();

  // @GuardedBy("lock")
  private long used;

  // @GuardedBy("lock")
  private final ArrayDeque<Waiter> waiters = new ArrayDeque<>();

  private final LongAdder waits = new LongAdder();
  private final LongAdder rejections = new LongAdder();

  /**
   * A budget of {@code capacity} bytes whose reservations wait at most {@code maxWait}, timed by
   * {@code timer}.
   */
  public InflightBytes(long capacity, Duration maxWait, ScheduledExecutorService timer) {
    this.capacity = capacity;
    this.maxWait = maxWait;
    this.timer = timer;
  }

  /** A budget that grants everything at once, for decoding outside a server. */
  static InflightBytes unbounded() {
    return new InflightBytes(Long.MAX_VALUE / 2, Duration.ZERO, null);
  }

  /** Reserves {@code n} bytes; the future completes when they are granted. */
  public CompletableFuture<Void> reserve(long n) {
    if (n > capacity) {
      rejections.increment();
      return CompletableFuture.failedFuture(
          new PayloadTooLargeException(
              "the request needs "
                  + n
                  + " bytes in memory, more than the server's whole"
                  + " in-flight budget of "
                  + capacity
                  + " bytes"));
    }
    Waiter w;
    lock.lock();
    try {
      if (waiters.isEmpty() && used + n <= capacity) {
        used += n;
        return CompletableFuture.completedFuture(null);
      }
      w = new Waiter(n);
      waiters.add(w);
    } finally {
      lock.unlock();
    }
    waits.increment();
    ScheduledFuture<?> expiry =
        timer.schedule(() -> expire(w), maxWait.toNanos(), TimeUnit.NANOSECONDS);
    w.future.whenComplete((ok, failure) -> expiry.cancel(false));
    return w.future;
  }

  /**
   * Reserves {@code n} bytes if they fit now, ahead of any waiting reservation, for bytes that are
   * arriving and cannot wait (they are returned as soon as their message is complete); false, and
   * counted as a rejection, when they do not fit.
   */
  public boolean tryReserve(long n) {
    lock.lock();
    try {
      if (used + n <= capacity) {
        used += n;
        return true;
      }
    } finally {
      lock.unlock();
    }
    rejections.increment();
    return false;
  }

  /** Returns {@code n} bytes reserved before and grants waiting reservations that now fit. */
  public void release(long n) {
    if (n <= 0) {
      return;
    }
    List<Waiter> granted;
    lock.lock();
    try {
      used -= n;
      granted = grantLocked();
    } finally {
      lock.unlock();
    }
    granted.forEach(w -> w.future.complete(null));
  }

  private void expire(Waiter w) {
    boolean removed;
    List<Waiter> granted;
    long inUse;
    int waiting;
    lock.lock();
    try {
      removed = waiters.remove(w);
      granted = grantLocked();
      inUse = used;
      waiting = waiters.size();
    } finally {
      lock.unlock();
    }
    granted.forEach(g -> g.future.complete(null));
    if (removed) {
      rejections.increment();
      w.future.completeExceptionally(
          new UnavailableException(
              "the server is busy: waited "
                  + maxWait.toMillis()
                  + " ms for "
                  + w.bytes
                  + " bytes of its in-flight request budget ("
                  + inUse
                  + " of "
                  + capacity
                  + " bytes in use, "
                  + waiting
                  + " requests waiting)",
              RETRY_AFTER));
    }
  }

  // @GuardedBy("lock")
  private List<Waiter> grantLocked() {
    List<Waiter> out = new ArrayList<>(0);
    for (Waiter head = waiters.peek();
        head != null && used + head.bytes <= capacity;
        head = waiters.peek()) {
      waiters.poll();
      used += head.bytes;
      out.add(head);
    }
    return out;
  }

  /** The bytes reserved now. */
  public long inUse() {
    lock.lock();
    try {
      return used;
    } finally {
      lock.unlock();
    }
  }

  public long capacity() {
    return capacity;
  }

  /** Reservations that had to wait, since start. */
  public long waits() {
    return waits.sum();
  }

  /** Reservations refused (timed out or larger than the budget), since start. */
  public long rejections() {
    return rejections.sum();
  }

  /** One waiting reservation. */
  private static final class Waiter {
    final long bytes;
    final CompletableFuture<Void> future = new CompletableFuture<>();

    Waiter(long bytes) {
      this.bytes = bytes;
    }
  }
}
