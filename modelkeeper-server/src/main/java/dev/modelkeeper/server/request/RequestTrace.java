package dev.modelkeeper.server.request;

import java.util.function.Supplier;

/**
 * The trace of one request, where the transport and the engine record its steps: {@code queue}
 * (waiting for a slot or a batch), {@code load} (the run waited for its model to load), the model's
 * {@linkplain #run run}, and {@code encode} (the answer's encoding). Steps are recorded once they
 * are over, from {@link System#nanoTime()} instants, so nothing stays open across threads. The
 * observability room implements it; {@link #NONE} records nothing, and callers ask {@link
 * #recording()} before they measure. Implementations are thread-safe.
 */
public interface RequestTrace {

  /** Records nothing. */
  RequestTrace NONE = new RequestTrace() {};

  /** Whether this trace records anything. */
  default boolean recording() {
    return false;
  }

  /** The model and version that answered the request. */
  default void model(String name, String version) {}

  /** A finished step named {@code name} from {@code startNanos} to {@code endNanos}. */
  default void step(String name, long startNanos, long endNanos) {}

  /**
   * A finished run of model {@code modelKey} that served {@code requests} requests of {@code rows}
   * rows in all (a batch), from {@code startNanos} to {@code endNanos}.
   */
  default void run(
      String modelKey, int requests, int rows, boolean ok, long startNanos, long endNanos) {}

  /** A number the transport knows of the request (a status code), under {@code key}. */
  default void attribute(String key, long value) {}

  /** Runs {@code work}, recorded as a step named {@code name} when this trace records. */
  default <T> T measure(String name, Supplier<T> work) {
    if (!recording()) {
      return work.get();
    }
    long start = System.nanoTime();
    T result = work.get();
    step(name, start, System.nanoTime());
    return result;
  }

  /** Ends the trace; {@code error} marks it failed with {@code description}. */
  default void end(boolean error, String description) {}
}
