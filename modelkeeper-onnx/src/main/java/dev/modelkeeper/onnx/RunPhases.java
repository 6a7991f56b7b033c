package dev.modelkeeper.onnx;

/**
 * When a run's inputs were ready for the runtime and when the runtime's own run ended, as {@link
 * System#nanoTime()} instants, so a caller that timed the whole call can split it into preparing
 * the inputs, running the model and reading the outputs. A model that does not note them leaves
 * both at 0. Not thread-safe: one instance serves one call on one thread.
 */
public final class RunPhases {

  private long inputsReady;
  private long runEnded;

  /** Notes that the inputs are ready for the runtime, now. */
  void inputsReady() {
    inputsReady = System.nanoTime();
  }

  /** Notes that the runtime's run has ended, now. */
  void runEnded() {
    runEnded = System.nanoTime();
  }

  /** The instant the inputs were ready, 0 when not noted. */
  public long inputsReadyAt() {
    return inputsReady;
  }

  /** The instant the runtime's run ended, 0 when not noted. */
  public long runEndedAt() {
    return runEnded;
  }
}
