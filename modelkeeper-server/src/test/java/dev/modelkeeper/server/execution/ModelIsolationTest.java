package dev.modelkeeper.server.execution;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.modelkeeper.core.BaseModelManager;
import dev.modelkeeper.core.CacheOptions;
import dev.modelkeeper.core.CapacityExceededException;
import dev.modelkeeper.core.ModelFactory;
import dev.modelkeeper.core.ModelLease;
import dev.modelkeeper.core.ModelManager;
import dev.modelkeeper.core.Ticker;
import dev.modelkeeper.core.WithFixedSizeCache;
import dev.modelkeeper.core.testkit.Gate;
import dev.modelkeeper.onnx.ModelConfig;
import dev.modelkeeper.onnx.Tensor;
import dev.modelkeeper.server.errors.UnavailableException;
import dev.modelkeeper.server.request.ModelTarget;
import dev.modelkeeper.testkit.RowModel;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Per-model executors over a real manager and budget, on real threads ordered by gates: a stalled
 * model's backlog is refused from its own queue while another model keeps answering, and a model in
 * the middle of a batch cannot be evicted.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ModelIsolationTest {

  private static final long FAR = Long.MAX_VALUE / 4;

  private final Map<String, RowModel> models = new ConcurrentHashMap<>();
  private ExecutorService pool;
  private ModelExecutors executors;

  @AfterEach
  void stop() {
    if (executors != null) {
      executors.shutdown(Duration.ofSeconds(5));
    }
    if (pool != null) {
      pool.shutdownNow();
    }
  }

  private ModelManager manager(int maxModels) {
    return new WithFixedSizeCache(
        new BaseModelManager(
            (id, key) ->
                new ModelFactory() {
                  @Override
                  public RowModel create(String modelId, String apiKey) {
                    return models.get(modelId);
                  }
                }),
        CacheOptions.builder(maxModels).capacityTimeout(Duration.ofMillis(200)).build());
  }

  private ModelExecutors executors(ModelManager manager) {
    pool = Executors.newCachedThreadPool();
    ExecutionSettings defaults = new ExecutionSettings(1, 0, Set.of(), 4, 2); // two queued at most
    executors =
        new ModelExecutors(
            defaults,
            ModelExecutors.leasing(manager),
            pool,
            (task, delay) -> {
              throw new AssertionError("no delay is configured");
            },
            () -> {},
            Ticker.system(),
            ExecutionListener.Factory.NONE);
    return executors;
  }

  private static ModelTarget target(String name) {
    return new ModelTarget(name, "1", name + "/1", null);
  }

  private CompletableFuture<Map<String, Tensor>> infer(String name, float first) {
    return executors.infer(
        target(name), RowModel.rows(1, 2, first), Set.of(), FAR, Execution.NO_RUN);
  }

  @Test
  void infer_whileAnotherModelIsStalledWithAFullQueue_answersAtOnce() throws Exception {
    Gate stall = new Gate();
    // one run at a time; batching off so the backlog stays queued
    models.put(
        "slow/1", new RowModel("slow", new ModelConfig.Execution(1, 0, List.of(), 1, -1, -1)));
    models.put("fast/1", new RowModel("fast", ModelConfig.Execution.DEFAULTS));
    executors(manager(2));
    infer("slow", 0).get(10, TimeUnit.SECONDS); // the executor now knows slow's settings
    models.get("slow/1").gate(stall);
    CompletableFuture<Map<String, Tensor>> stalled = infer("slow", 0);
    stall.awaitEntered();
    CompletableFuture<Map<String, Tensor>> queued1 = infer("slow", 1);
    CompletableFuture<Map<String, Tensor>> queued2 = infer("slow", 2);
    CompletableFuture<Map<String, Tensor>> refused = infer("slow", 3);
    assertThatThrownBy(() -> refused.get(10, TimeUnit.SECONDS))
        .hasCauseInstanceOf(UnavailableException.class)
        .hasMessageContaining("'slow/1' is busy");

    for (int i = 0; i < 20; i++) {
      assertThat(infer("fast", 100 * i).get(10, TimeUnit.SECONDS).get("y").floats())
          .containsExactly(100 * i + 1, 100 * i + 2);
    }
    assertThat(stalled).isNotDone();
    assertThat(executors.executor("slow/1").queued()).isEqualTo(2);

    stall.open();
    assertThat(stalled.get(10, TimeUnit.SECONDS).get("y").floats()).containsExactly(1, 2);
    assertThat(queued1.get(10, TimeUnit.SECONDS).get("y").floats()).containsExactly(2, 3);
    assertThat(queued2.get(10, TimeUnit.SECONDS).get("y").floats()).containsExactly(3, 4);
  }

  @Test
  void evict_whileABatchRuns_waitsForTheBatchsLease() throws Exception {
    Gate first = new Gate();
    Gate batch = new Gate();
    RowModel a = new RowModel("a", new ModelConfig.Execution(8, 0, List.of(), 1, -1, -1));
    models.put("a/1", a);
    models.put("b/1", new RowModel("b", ModelConfig.Execution.DEFAULTS));
    ModelManager manager = manager(1);
    executors(manager);
    infer("a", 0).get(10, TimeUnit.SECONDS);
    a.gate(first);
    CompletableFuture<Map<String, Tensor>> alone = infer("a", 0);
    first.awaitEntered();
    CompletableFuture<Map<String, Tensor>> row1 = infer("a", 10);
    CompletableFuture<Map<String, Tensor>> row2 = infer("a", 20);
    a.gate(batch);
    first.open();
    batch.awaitEntered(); // the two queued requests now run as one batch
    assertThat(a.runs()).containsExactly(1L, 1L, 2L);

    // the budget holds one model, and 'a' is mid-batch: 'b' cannot take its place
    assertThatThrownBy(() -> manager.acquire("b/1", null).close())
        .isInstanceOf(CapacityExceededException.class);
    assertThat(a.violations()).isEmpty();

    batch.open();
    assertThat(alone.get(10, TimeUnit.SECONDS).get("y").floats()).containsExactly(1, 2);
    assertThat(row1.get(10, TimeUnit.SECONDS).get("y").floats()).containsExactly(11, 12);
    assertThat(row2.get(10, TimeUnit.SECONDS).get("y").floats()).containsExactly(21, 22);
    try (ModelLease lease = manager.acquire("b/1", null)) { // now 'a' is idle and is evicted
      assertThat(lease.modelId()).isEqualTo("b/1");
    }
    assertThat(a.violations()).isEmpty();
  }
}
