package dev.modelkeeper.server.admission;

import dev.modelkeeper.server.errors.PayloadTooLargeException;
import dev.modelkeeper.server.errors.UnavailableException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * The bytes one request holds in the {@link InflightBytes} budget (its body, then its decoded
 * tensors), returned all at once when every holder has let go. Thread-safe.
 *
 * <p>Holders are counted: the HTTP exchange holds one reference from the start and lets go when its
 * response is done (or failed); a worker that decodes or runs the request takes another with {@link
 * #retain()} and lets go when it ends. The exchange ending also marks the request {@link
 * #abandoned()}, so decoding and waiting for it stop early.
 */
public final class RequestBytes {

  private final InflightBytes budget;

  // @GuardedBy("this")
  private long held;

  // @GuardedBy("this")
  private int refs = 1;

  private volatile boolean abandoned;

  // @GuardedBy("this")
  private Runnable onReturn;

  public RequestBytes(InflightBytes budget) {
    this.budget = budget;
  }

  /** A ledger over a budget that grants everything, for decoding outside a server. */
  public static RequestBytes untracked() {
    return new RequestBytes(InflightBytes.unbounded());
  }

  /** Reserves {@code n} more bytes for this request; completes when they are granted. */
  public CompletableFuture<Void> reserveAsync(long n) {
    return budget.reserve(n).thenRun(() -> granted(n));
  }

  /**
   * Reserves {@code n} more bytes, waiting (bounded by the budget's admission timeout).
   *
   * @throws UnavailableException when the wait ran out or the request was abandoned
   * @throws PayloadTooLargeException when {@code n} is more than the whole budget
   */
  public void reserve(long n) {
    checkNotAbandoned();
    try {
      reserveAsync(n).get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new UnavailableException("interrupted while waiting for memory", Duration.ofSeconds(1));
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof RuntimeException) {
        throw (RuntimeException) cause;
      }
      throw new IllegalStateException(cause);
    }
  }

  private void granted(long n) {
    synchronized (this) {
      if (refs > 0) {
        held += n;
        return;
      }
    }
    budget.release(n);
  }

  /** Adds a holder; pair with {@link #release()}. */
  public synchronized void retain() {
    if (refs == 0) {
      throw new IllegalStateException("the request's bytes were already returned");
    }
    refs++;
  }

  /** Lets go of one holder; the last one returns every byte to the budget. */
  public void release() {
    long give;
    Runnable then;
    synchronized (this) {
      if (refs == 0 || --refs > 0) {
        return;
      }
      give = held;
      held = 0;
      then = onReturn;
      onReturn = null;
    }
    budget.release(give);
    if (then != null) {
      then.run();
    }
  }

  /**
   * Runs {@code action} when the last holder lets go (at once when none is left): how memory the
   * request's bytes live in is given back. One action per request.
   */
  public void whenReturned(Runnable action) {
    synchronized (this) {
      if (onReturn != null) {
        throw new IllegalStateException("the request already has an action for its return");
      }
      if (refs > 0) {
        onReturn = action;
        return;
      }
    }
    action.run();
  }

  /** Marks the request as no longer wanted: its client got an answer or went away. */
  public void abandon() {
    abandoned = true;
  }

  boolean abandoned() {
    return abandoned;
  }

  /**
   * @throws UnavailableException when the request was abandoned
   */
  public void checkNotAbandoned() {
    if (abandoned) {
      throw new UnavailableException(
          "the request was abandoned: its client was answered or went away", Duration.ofSeconds(1));
    }
  }

  /** The bytes this request holds now. */
  synchronized long held() {
    return held;
  }
}
