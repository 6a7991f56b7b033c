package dev.modelkeeper.server.statistics;

import java.util.List;

/**
 * One model version's inference statistics since the server started, as Triton's statistics
 * extension has them. Per request: {@code success} and {@code fail} (from being queued to being
 * answered), {@code queue}, and the phases of the run that served it ({@code computeInput}, {@code
 * computeInfer}, {@code computeOutput}; a request served in a batch is charged the batch's times).
 * Per run: {@code executionCount} and {@code batches}. Immutable.
 *
 * @param lastInferenceMillis when the latest request ended, in milliseconds since the epoch; 0
 *     before the first
 * @param inferenceCount the inferences made: the rows of every run
 * @param executionCount the model's runs, a batch counting once
 * @param batches the runs per batch size, smallest first
 * @param queued the requests waiting in the model's queue now
 */
public record ModelStats(
    long lastInferenceMillis,
    long inferenceCount,
    long executionCount,
    Timing success,
    Timing fail,
    Timing queue,
    Timing computeInput,
    Timing computeInfer,
    Timing computeOutput,
    List<BatchStats> batches,
    int queued) {

  /** A model that has served nothing. */
  public static final ModelStats NONE =
      new ModelStats(
          0,
          0,
          0,
          Timing.NONE,
          Timing.NONE,
          Timing.NONE,
          Timing.NONE,
          Timing.NONE,
          Timing.NONE,
          List.of(),
          0);

  public ModelStats {
    batches = List.copyOf(batches);
  }
}
