package dev.modelkeeper.server.execution;

import dev.modelkeeper.onnx.ModelConfig;
import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;

/**
 * How one model's requests are queued, batched and run: the server-wide defaults (the server's
 * {@code --max-batch-size}, {@code --max-queue-delay}, {@code --max-concurrency} and {@code
 * --max-queue-size}) overridden by the model's configuration ({@link ModelConfig.Execution}).
 * Immutable and thread-safe.
 *
 * @param maxBatchSize the most rows one run concatenates; 1 means every request runs alone
 * @param maxQueueDelayNanos how long the oldest queued request waits for more rows before a partial
 *     batch runs; 0 runs whatever is queued at once (rows still accumulate while every allowed run
 *     is busy)
 * @param preferredBatchSizes row counts that run at once when reached, before the delay ends
 * @param maxConcurrency the most runs of the model at once
 * @param maxQueueSize the most requests waiting for the model; more are answered 503
 */
public record ExecutionSettings(
    int maxBatchSize,
    long maxQueueDelayNanos,
    Set<Integer> preferredBatchSizes,
    int maxConcurrency,
    int maxQueueSize) {

  public ExecutionSettings {
    preferredBatchSizes = Set.copyOf(preferredBatchSizes);
  }

  /** These settings with whatever {@code model} sets in its config. */
  public ExecutionSettings overriddenBy(ModelConfig.Execution model) {
    if (model.maxBatchSize() == 0) { // no batch dimension: requests run one by one
      return new ExecutionSettings(
          1,
          0,
          Set.of(),
          model.maxConcurrency() > 0 ? model.maxConcurrency() : maxConcurrency,
          maxQueueSize);
    }
    return new ExecutionSettings(
        model.maxBatchSize() > 0 ? model.maxBatchSize() : maxBatchSize,
        model.maxQueueDelayMicros() >= 0
            ? Duration.ofNanos(model.maxQueueDelayMicros() * 1000).toNanos()
            : maxQueueDelayNanos,
        model.preferredBatchSizes().isEmpty()
            ? preferredBatchSizes
            : new TreeSet<>(model.preferredBatchSizes()),
        model.maxConcurrency() > 0 ? model.maxConcurrency() : maxConcurrency,
        maxQueueSize);
  }

  /** The same settings with batching off (for a model whose first dimension is fixed). */
  ExecutionSettings unbatched() {
    return new ExecutionSettings(1, 0, Set.of(), maxConcurrency, maxQueueSize);
  }
}
