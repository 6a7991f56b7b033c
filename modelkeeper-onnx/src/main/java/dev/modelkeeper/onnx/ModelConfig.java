package dev.modelkeeper.onnx;

import java.util.List;

/**
 * The optional per-version {@code config.json} of a repository model. Immutable and thread-safe.
 *
 * <p>Format (every key optional, unknown keys ignored; at most 64 KiB):
 *
 * <pre>{@code
 * {
 *   "description": "Iris species classifier (multinomial logistic regression)",
 *   "labels": ["setosa", "versicolor", "virginica"],
 *   "expected_size_bytes": 1234,
 *   "max_batch_size": 32,
 *   "max_queue_delay": 500,
 *   "preferred_batch_sizes": [8, 16],
 *   "max_concurrency": 2,
 *   "intra_op_threads": 1,
 *   "inter_op_threads": 1
 * }
 * }</pre>
 *
 * <p>The last six keys are the model's {@link Execution} settings; each one left out takes the
 * server-wide default.
 *
 * @param description a human-readable description, empty when none
 * @param labels class labels (index i names class i), empty when none
 * @param expectedSizeBytes the resident size to reserve before loading, or -1 when not given
 * @param execution how the server batches and runs the model; {@link Execution#DEFAULTS} when the
 *     config sets none of it
 */
public record ModelConfig(
    String description, List<String> labels, long expectedSizeBytes, Execution execution) {

  /** The file name of a version's config inside its folder. */
  public static final String FILE_NAME = "config.json";

  /** A config with nothing in it. */
  public static final ModelConfig EMPTY = new ModelConfig("", List.of(), -1);

  public ModelConfig {
    description = description == null ? "" : description;
    labels = labels == null ? List.of() : List.copyOf(labels);
    execution = execution == null ? Execution.DEFAULTS : execution;
  }

  /** A config with the server's default execution settings. */
  public ModelConfig(String description, List<String> labels, long expectedSizeBytes) {
    this(description, labels, expectedSizeBytes, Execution.DEFAULTS);
  }

  /**
   * How the server runs one model; every value of -1 (or an empty list) means "the server-wide
   * default". Immutable and thread-safe.
   *
   * @param maxBatchSize the most rows one batched run concatenates ({@code max_batch_size}); 1
   *     turns batching off for the model
   * @param maxQueueDelayMicros how long the first request of a batch may wait for more rows, in
   *     microseconds ({@code max_queue_delay}); 0 runs whatever has queued up at once
   * @param preferredBatchSizes batch sizes that are run at once when reached, before the delay ends
   *     ({@code preferred_batch_sizes})
   * @param maxConcurrency the most runs of the model at once ({@code max_concurrency})
   * @param intraOpThreads ONNX Runtime threads inside one operator ({@code intra_op_threads})
   * @param interOpThreads ONNX Runtime threads across independent operators ({@code
   *     inter_op_threads})
   */
  public record Execution(
      int maxBatchSize,
      long maxQueueDelayMicros,
      List<Integer> preferredBatchSizes,
      int maxConcurrency,
      int intraOpThreads,
      int interOpThreads) {

    /** Every setting left to the server. */
    public static final Execution DEFAULTS = new Execution(-1, -1, List.of(), -1, -1, -1);

    /**
     * @throws IllegalArgumentException when a value is below its minimum (1 for counts, 0 for the
     *     delay) and not -1, or a preferred size is not positive
     */
    public Execution {
      atLeast("max_batch_size", maxBatchSize, 1);
      atLeast("max_queue_delay", maxQueueDelayMicros, 0);
      atLeast("max_concurrency", maxConcurrency, 1);
      atLeast("intra_op_threads", intraOpThreads, 1);
      atLeast("inter_op_threads", interOpThreads, 1);
      preferredBatchSizes = preferredBatchSizes == null ? List.of() : List.copyOf(preferredBatchSizes);
      for (int size : preferredBatchSizes) {
        if (size < 1) {
          throw new IllegalArgumentException(
              "config key \"preferred_batch_sizes\" must hold positive integers, has " + size);
        }
      }
    }

    private static void atLeast(String key, long value, long min) {
      if (value != -1 && value < min) {
        throw new IllegalArgumentException(
            "config key \"" + key + "\" must be at least " + min + ", was " + value);
      }
    }
  }

  /**
   * Parses the JSON text of a config file.
   *
   * @throws IllegalArgumentException when the text is not valid JSON or a key has the wrong type
   */
  public static ModelConfig parse(String json) {
    return ModelConfigJson.parse(json);
  }

  /** This config as JSON text that {@link #parse} reads back. */
  public String toJson() {
    return ModelConfigJson.write(this);
  }
}
