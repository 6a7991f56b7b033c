package dev.modelkeeper.server.grpc;

import dev.modelkeeper.server.engine.Engine;
import dev.modelkeeper.server.statistics.BatchStats;
import dev.modelkeeper.server.statistics.ModelStats;
import dev.modelkeeper.server.statistics.Timing;
import java.util.List;

/** The statistics extension's answer in Triton's messages. Stateless. */
final class GrpcStatistics {

  private GrpcStatistics() {}

  /** {@code models}' statistics as a {@code ModelStatistics} answer. */
  static ModelStatisticsResponse response(List<Engine.VersionStats> models) {
    ModelStatisticsResponse.Builder b = ModelStatisticsResponse.newBuilder();
    for (Engine.VersionStats v : models) {
      ModelStats s = v.stats();
      ModelStatistics.Builder m =
          b.addModelStatsBuilder()
              .setName(v.name())
              .setVersion(v.version())
              .setLastInference(s.lastInferenceMillis())
              .setInferenceCount(s.inferenceCount())
              .setExecutionCount(s.executionCount())
              .setInferenceStats(
                  InferStatistics.newBuilder()
                      .setSuccess(duration(s.success()))
                      .setFail(duration(s.fail()))
                      .setQueue(duration(s.queue()))
                      .setComputeInput(duration(s.computeInput()))
                      .setComputeInfer(duration(s.computeInfer()))
                      .setComputeOutput(duration(s.computeOutput()))
                      .setCacheHit(duration(Timing.NONE))
                      .setCacheMiss(duration(Timing.NONE)));
      for (BatchStats batch : s.batches()) {
        m.addBatchStatsBuilder()
            .setBatchSize(batch.batchSize())
            .setComputeInput(duration(batch.computeInput()))
            .setComputeInfer(duration(batch.computeInfer()))
            .setComputeOutput(duration(batch.computeOutput()));
      }
    }
    return b.build();
  }

  private static StatisticDuration duration(Timing t) {
    return StatisticDuration.newBuilder().setCount(t.count()).setNs(t.ns()).build();
  }
}
