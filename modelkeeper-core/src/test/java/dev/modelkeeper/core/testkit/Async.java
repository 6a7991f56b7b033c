package dev.modelkeeper.core.testkit;

import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;

/**
 * A call running on its own thread, joined with a timeout so that a hang fails the test instead of
 * stalling the build. Thread-safe.
 */
public final class Async<T> {
  private final CompletableFuture<T> result = new CompletableFuture<>();
  private final Thread thread;

  private Async(String name, Callable<T> body) {
    thread =
        new Thread(
            () -> {
              try {
                result.complete(body.call());
              } catch (Throwable t) {
                result.completeExceptionally(t);
              }
            },
            name);
    thread.setDaemon(true);
    thread.start();
  }

  public static <T> Async<T> call(String name, Callable<T> body) {
    return new Async<>(name, body);
  }

  public static Async<Void> run(String name, ThrowingRunnable body) {
    return new Async<>(
        name,
        () -> {
          body.run();
          return null;
        });
  }

  /**
   * The result; fails the test if the call has not finished within {@link Gate#TIMEOUT_SECONDS}.
   */
  public T join() throws Exception {
    try {
      return result.get(Gate.TIMEOUT_SECONDS, TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      throw new AssertionError(
          thread.getName() + " did not finish within " + Gate.TIMEOUT_SECONDS + "s");
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof Exception) {
        throw (Exception) cause;
      }
      throw (Error) cause;
    }
  }

  /** The exception the call ended with; fails if it returned normally or hung. */
  public Throwable joinFailure() throws Exception {
    try {
      join();
    } catch (Exception | AssertionError e) {
      if (e instanceof AssertionError
          && e.getMessage() != null
          && e.getMessage().contains("did not finish")) {
        throw (AssertionError) e;
      }
      return e;
    }
    throw new AssertionError(thread.getName() + " returned normally");
  }

  /**
   * Waits until the call has finished or its thread is parked (waiting for something else); fails
   * if neither happens within {@link Gate#TIMEOUT_SECONDS}. Polls the thread's state.
   */
  public void awaitBlockedOrDone() {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(Gate.TIMEOUT_SECONDS);
    while (!isDone()) {
      Thread.State state = thread.getState();
      if (state == Thread.State.WAITING || state == Thread.State.TIMED_WAITING) {
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError(thread.getName() + " neither finished nor blocked");
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1)); // polling a condition, not ordering
    }
  }

  public boolean isDone() {
    return result.isDone();
  }

  public Thread thread() {
    return thread;
  }

  /** A body that may throw. */
  @FunctionalInterface
  public interface ThrowingRunnable {
    void run() throws Exception;
  }
}
