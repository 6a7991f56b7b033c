package dev.modelkeeper.server.config;

import io.soabase.recordbuilder.core.RecordBuilder;
import java.time.Duration;

/**
 * How requests are scheduled; the batching settings apply to models whose config does not say.
 *
 * @param workerThreads threads for requests that may wait for a load or an unload; at most half
 *     this many inferences run their model at once on the thread that received them
 * @param maxBatchSize the most rows one batched run joins ({@code max_batch_size}); 1: no batching
 * @param maxQueueDelay how long the oldest queued request waits for more rows before a partial
 *     batch runs ({@code max_queue_delay}); 0 runs whatever has queued at once
 * @param maxConcurrency the most runs of one model at once ({@code max_concurrency})
 * @param maxQueueSize the most requests queued for one model; more are answered 503
 */
@RecordBuilder
public record Scheduling(
    int workerThreads,
    int maxBatchSize,
    Duration maxQueueDelay,
    int maxConcurrency,
    int maxQueueSize)
    implements SchedulingBuilder.With {

  public static final Scheduling DEFAULTS = new Scheduling(64, 1, Duration.ZERO, 4, 256);

  public Scheduling {
    Check.atLeast("worker-threads", workerThreads, 1);
    Check.atLeast("max-batch-size", maxBatchSize, 1);
    Check.notNegative("max-queue-delay", maxQueueDelay);
    Check.atLeast("max-concurrency", maxConcurrency, 1);
    Check.atLeast("max-queue-size", maxQueueSize, 1);
  }
}
