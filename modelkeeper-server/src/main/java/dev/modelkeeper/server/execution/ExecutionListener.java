package dev.modelkeeper.server.execution;

import java.util.function.IntSupplier;

/**
 * What one model's executor reports as it works: the execution room's seam for whoever observes it
 * (the server's metrics). Methods are called outside any lock, on the thread that did the work;
 * implementations are thread-safe and quick. {@link #NONE} reports nowhere.
 */
public interface ExecutionListener {

  /** Reports nowhere. */
  ExecutionListener NONE = new ExecutionListener() {};

  /** A request was refused: the model's queue was full. */
  default void rejected() {}

  /** A request waited {@code queueNanos} for its run to start. */
  default void waited(long queueNanos) {}

  /** A run of {@code requests} requests, {@code rows} rows in all, took {@code runNanos}. */
  default void ran(int requests, int rows, long runNanos) {}

  /**
   * As {@link #ran(int, int, long)}, the run's time split into preparing the inputs for the runtime
   * ({@code inputNanos}), the runtime's own run ({@code inferNanos}) and reading its outputs back
   * ({@code outputNanos}); the default reports their sum to {@link #ran(int, int, long)}.
   */
  default void ran(int requests, int rows, long inputNanos, long inferNanos, long outputNanos) {
    ran(requests, rows, inputNanos + inferNanos + outputNanos);
  }

  /**
   * A request ended, answered ({@code ok}) or failed (expired in the queue or its run failed),
   * {@code nanos} after it was queued, at the {@link dev.modelkeeper.core.Ticker} instant {@code
   * endedAt}.
   */
  default void ended(boolean ok, long nanos, long endedAt) {}

  /**
   * Gives each model's executor its listener, and hears of each answered request. Implementations
   * are thread-safe; {@link #NONE} gives {@link ExecutionListener#NONE} and hears nothing.
   */
  @FunctionalInterface
  interface Factory {

    /** Listeners that report nowhere. */
    Factory NONE = (modelKey, queued) -> ExecutionListener.NONE;

    /**
     * The listener of the executor of model {@code modelKey}, whose queue depth {@code queued}
     * reads at any time; called once per model.
     */
    ExecutionListener forModel(String modelKey, IntSupplier queued);

    /** An inference request was answered, whatever the outcome. */
    default void answered() {}
  }
}
