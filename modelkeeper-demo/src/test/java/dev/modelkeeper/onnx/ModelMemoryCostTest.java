package dev.modelkeeper.onnx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.modelkeeper.core.WithFixedSizeCache;
import dev.modelkeeper.onnx.demo.Mlp;
import dev.modelkeeper.onnx.memory.MemoryCost;
import dev.modelkeeper.onnx.memory.MemoryCosts;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A loaded ONNX model is charged what it was measured to take, runs reserve their working memory
 * first, and a batch over the configured max_batch_size is refused.
 */
class ModelMemoryCostTest {

  private static final long MODEL_BYTES = 24L << 20;

  @TempDir Path root;

  private final List<Long> reserved = new CopyOnWriteArrayList<>();

  private OnnxModel load(Path repo, String id, MemoryCosts costs) throws Exception {
    OnnxModelOptions options =
        OnnxModelOptions.defaults()
            .withMemoryCosts(costs)
            .withWorkingMemory(
                (modelId, bytes) -> {
                  reserved.add(bytes);
                  return WithFixedSizeCache.Reservation.NONE;
                });
    return (OnnxModel)
        new RepositoryModelRegistry(new LocalModelRepository(repo), options)
            .getModel(id, null)
            .create(id, null);
  }

  private static Map<String, Tensor> rows(int n) {
    return Map.of(Mlp.INPUT, Tensor.ofFloats(Mlp.INPUT, new long[] {n, 256}, new float[n * 256]));
  }

  @Test
  void load_measuresWhatTheModelKeeps_andChargesIt() throws Exception {
    Mlp.ofApproxBytes(MODEL_BYTES, 7).writeTo(root.resolve("big/1/model.onnx"));
    MemoryCosts costs = MemoryCosts.persistedIn(root.resolve("costs.json"));

    OnnxModel model = load(root, "big/1", costs);
    try {
      MemoryCost c = costs.known("big/1").orElseThrow();
      assertThat(c.measured()).as("a load alone in the process is measured").isTrue();
      // weights are the model: what it keeps is close to its file and below the estimate (1.5x
      // plus 4 MiB); the band is wide because the JVM's own threads move RSS during the load too
      assertThat(c.idleBytes()).isBetween(MODEL_BYTES / 2, MODEL_BYTES * 3 / 2);
      assertThat(c.loadPeakBytes()).isGreaterThanOrEqualTo(c.idleBytes());
      assertThat(model.sizeBytes()).isEqualTo(c.idleBytes());
      assertThat(model.sizeBytes()).isLessThan(MemoryCost.estimate(model.fileBytes()).idleBytes());
    } finally {
      model.clearCache();
    }
  }

  @Test
  void infer_reservesTheWorkingMemoryOfItsBatch_beforeItRuns() throws Exception {
    Mlp.random(3, 256, 64, 16).writeTo(root.resolve("small/1/model.onnx"));
    MemoryCosts costs = MemoryCosts.inMemory();
    OnnxModel model = load(root, "small/1", costs);
    try {
      long beforeAnyRun = model.workingBytes(8);
      model.infer(rows(8), Set.of());
      long afterOneRun = model.workingBytes(16);
      model.infer(rows(16), Set.of());

      // the first run reserves the estimate, the next what the first one taught
      assertThat(beforeAnyRun)
          .isEqualTo(MemoryCost.estimate(model.fileBytes()).workingBytes())
          .isPositive();
      assertThat(reserved).containsExactly(beforeAnyRun, afterOneRun);
    } finally {
      model.clearCache();
    }
  }

  @Test
  void infer_ofMoreRowsThanMaxBatchSize_isRefusedNamingTheLimit() throws Exception {
    Mlp.random(3, 256, 64, 16).writeTo(root.resolve("capped/1/model.onnx"));
    Files.writeString(
        root.resolve("capped/1/config.json"), "{\"max_batch_size\": 4}", StandardCharsets.UTF_8);
    OnnxModel model = load(root, "capped/1", MemoryCosts.inMemory());
    try {
      assertThat(model.infer(rows(4), Set.of()).get(Mlp.OUTPUT).shape()).containsExactly(4, 16);

      assertThatThrownBy(() -> model.infer(rows(5), Set.of()))
          .isInstanceOf(InvalidInputException.class)
          .hasMessageContaining("a batch of 5 rows")
          .hasMessageContaining("max_batch_size 4");
      assertThat(reserved).hasSize(1); // the refused batch reserved nothing
    } finally {
      model.clearCache();
    }
  }
}
