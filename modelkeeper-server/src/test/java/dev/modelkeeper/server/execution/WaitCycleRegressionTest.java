package dev.modelkeeper.server.execution;

import static org.assertj.core.api.Assertions.assertThat;

import dev.modelkeeper.core.BaseModelManager;
import dev.modelkeeper.core.CacheOptions;
import dev.modelkeeper.core.ManagerOptions;
import dev.modelkeeper.core.WithFixedSizeCache;
import dev.modelkeeper.core.testkit.Gate;
import dev.modelkeeper.onnx.Tensor;
import dev.modelkeeper.server.memory.BudgetWorkingMemory;
import dev.modelkeeper.server.request.ModelTarget;
import dev.modelkeeper.testkit.FakeModels;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Pins the wait cycle between two runs: models {@code a} and {@code b} (40 bytes each) are both
 * resident and leased by a run each, and each run needs 30 bytes of working memory in a budget of
 * 100, which holds both models and one run, or one model and both runs. Waiting with their leases
 * held, each run needed the room the other's model took, and both stalled until the capacity
 * timeout. Now the second run to wait steps back: its lease closes, the first run evicts its model
 * and runs, and the second loads its model again and runs. The two runs hold their leases at once
 * because each pauses at a gate in its first inference until both are there.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class WaitCycleRegressionTest {

  private ModelExecutors executors;

  @AfterEach
  void stop() {
    if (executors != null) {
      executors.shutdown(Duration.ofSeconds(5));
    }
  }

  @Test
  void twoRunsHoldingLeases_bothNeedingWorkingMemory_bothFinishWithoutStalling() throws Exception {
    Gate both = new Gate(2);
    FakeModels models =
        FakeModels.of("a/1", "b/1").size("a/1", 40).size("b/1", 40).gateInfer("a/1", both);
    models.gateInfer("b/1", both);
    BaseModelManager base = new BaseModelManager(models, ManagerOptions.defaults());
    // a stall would last the whole capacity timeout: far longer than the test waits
    WithFixedSizeCache budget =
        new WithFixedSizeCache(
            base,
            CacheOptions.builder(8).maxBytes(100).capacityTimeout(Duration.ofSeconds(90)).build());
    models.working(new BudgetWorkingMemory(() -> budget), 30);
    budget.addModel("a/1", null);
    budget.addModel("b/1", null);
    executors =
        ModelExecutors.create(
            budget, new ExecutionSettings(1, 0, Set.of(), 1, 8), ExecutionListener.Factory.NONE);

    CompletableFuture<Map<String, Tensor>> a = infer("a");
    CompletableFuture<Map<String, Tensor>> b = infer("b");
    both.awaitEntered();
    both.open();

    assertThat(a.get(30, TimeUnit.SECONDS)).containsKey("y");
    assertThat(b.get(30, TimeUnit.SECONDS)).containsKey("y");
    assertThat(budget.waits()).isEmpty();
    assertThat(budget.workingBytes()).isZero();
    assertThat(models.violations()).isEmpty();
  }

  private CompletableFuture<Map<String, Tensor>> infer(String name) {
    return executors.infer(
        new ModelTarget(name, "1", name + "/1", null),
        Map.of("x", Tensor.ofFloats("x", new long[] {2}, 1f, 2f)),
        Set.of(),
        System.nanoTime() + TimeUnit.SECONDS.toNanos(60),
        Execution.NO_RUN);
  }
}
