package dev.modelkeeper.core.verification;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.modelkeeper.core.BaseModelManager;
import dev.modelkeeper.core.CacheOptions;
import dev.modelkeeper.core.CapacityExceededException;
import dev.modelkeeper.core.ManagerOptions;
import dev.modelkeeper.core.Model;
import dev.modelkeeper.core.ModelLoadException;
import dev.modelkeeper.core.RemovalCause;
import dev.modelkeeper.core.WithFixedSizeCache;
import dev.modelkeeper.core.testkit.Async;
import dev.modelkeeper.core.testkit.FakeTicker;
import dev.modelkeeper.core.testkit.Gate;
import dev.modelkeeper.core.testkit.Invariants;
import dev.modelkeeper.core.testkit.LifecycleMonitor;
import dev.modelkeeper.core.testkit.TestModel;
import dev.modelkeeper.core.testkit.TestRegistry;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/** Boundaries of the budget that the mutation report showed untested. */
class BudgetEdgeCasesTest {

  private final TestRegistry registry =
      TestRegistry.of("a", "b", "c").size("a", 100).size("b", 100).size("c", 100);
  private final BaseModelManager base =
      new BaseModelManager(
          registry, ManagerOptions.builder().ticker(FakeTicker.autoAdvancing()).build());

  @Test
  void countBudget_exactlyFull_keepsEveryModelWithoutEvicting() {
    WithFixedSizeCache cache = new WithFixedSizeCache(base, 2);
    cache.addModel("a", "key");
    cache.addModel("b", "key");
    assertThat(cache.keys()).containsExactlyInAnyOrder("a", "b");
    assertThat(base.stats().evictionsTotal()).isZero();
    cache.addModel("c", "key");
    assertThat(cache.keys()).containsExactlyInAnyOrder("b", "c");
    assertThat(Invariants.checkQuiescent(cache, base, cache, registry, true)).isEmpty();
  }

  @Test
  void byteBudget_exactlyFull_keepsEveryModelWithoutEvicting() {
    WithFixedSizeCache cache =
        new WithFixedSizeCache(base, CacheOptions.builder(10).maxBytes(200).build());
    cache.addModel("a", "key");
    cache.addModel("b", "key");
    assertThat(cache.keys()).containsExactlyInAnyOrder("a", "b");
    assertThat(cache.usedBytes()).isEqualTo(200);
    cache.addModel("c", "key");
    assertThat(cache.keys()).containsExactlyInAnyOrder("b", "c");
    assertThat(base.stats().evictions()).containsKey(RemovalCause.BYTE_BUDGET);
    assertThat(Invariants.checkQuiescent(cache, base, cache, registry, true)).isEmpty();
  }

  @Test
  void byteBudget_modelAsLargeAsTheWholeBudget_loads() {
    WithFixedSizeCache cache =
        new WithFixedSizeCache(base, CacheOptions.builder(10).maxBytes(100).build());
    cache.addModel("a", "key");
    assertThat(cache.usedBytes()).isEqualTo(100);
    registry.size("b", 101);
    assertThatThrownBy(() -> cache.addModel("b", "key"))
        .isInstanceOf(CapacityExceededException.class)
        .hasMessageContaining("more than the whole byte budget");
    assertThat(cache.stats().capacityRejections()).isEqualTo(1);
    assertThat(registry.constructions("b")).isZero();
  }

  @Test
  void budgetOverPopulatedManager_countsTheirBytesAndKeepsRecencyOrder() {
    LifecycleMonitor monitor = new LifecycleMonitor();
    Map<String, Model> present = new LinkedHashMap<>();
    present.put("x", new TestModel("x", "x", 100, monitor));
    present.put("y", new TestModel("y", "y", 50, monitor));
    BaseModelManager populated =
        new BaseModelManager(
            registry, present, ManagerOptions.builder().ticker(FakeTicker.autoAdvancing()).build());
    populated.acquire("x", "key").close(); // x becomes the most recently used
    WithFixedSizeCache cache =
        new WithFixedSizeCache(populated, CacheOptions.builder(3).maxBytes(1000).build());
    assertThat(cache.usedBytes()).isEqualTo(150);
    assertThat(cache.usedSlots()).isEqualTo(2);
    assertThat(cache.lruOrder()).containsExactly("y", "x");
  }

  @Test
  void capacityRefusal_afterWaiting_saysHowLongItWaited() {
    WithFixedSizeCache cache =
        new WithFixedSizeCache(
            base, CacheOptions.builder(1).capacityTimeout(Duration.ofMillis(20)).build());
    cache.addModel("a", "key");
    try (var lease = cache.acquire("a", "key")) {
      assertThatThrownBy(() -> cache.addModel("b", "key"))
          .isInstanceOf(CapacityExceededException.class)
          .hasMessageContaining("no room after waiting for PT0.02S")
          .hasMessageContaining("models 1/1 of which 0 loading");
    }
    assertThat(cache.stats().capacityWaits()).isEqualTo(1);
    assertThat(cache.stats().capacityRejections()).isEqualTo(1);
  }

  @Test
  void warmAdd_refreshesRecency_soTheOtherModelIsEvicted() {
    WithFixedSizeCache cache = new WithFixedSizeCache(base, 2);
    cache.addModel("a", "key");
    cache.addModel("b", "key");
    cache.addModel("a", "key"); // warm: a becomes the most recently used
    cache.addModel("c", "key");
    assertThat(cache.keys()).containsExactlyInAnyOrder("a", "c");
  }

  @Test
  void failedLoad_returnsItsReservedBytesAndWakesAWaiterForRoom() throws Exception {
    WithFixedSizeCache cache =
        new WithFixedSizeCache(
            base,
            CacheOptions.builder(1).maxBytes(100).capacityTimeout(Duration.ofSeconds(60)).build());
    Gate constructing = new Gate();
    registry.pauseNextLoad("a", constructing).failNextLoads("a", 1);
    var loadA = Async.run("load a", () -> cache.addModel("a", "key"));
    constructing.awaitEntered();
    assertThat(cache.usedBytes()).isEqualTo(100);
    var loadB = Async.run("load b", () -> cache.addModel("b", "key"));
    Awaitility.await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> cache.stats().capacityWaits() == 1); // b waits for the room a reserved
    constructing.open();
    assertThat(loadA.joinFailure()).isInstanceOf(ModelLoadException.class);
    loadB.join(); // within the join timeout: woken by the failure, not by its 60 s deadline
    assertThat(cache.keys()).containsExactly("b");
    assertThat(cache.usedBytes()).isEqualTo(100);
    assertThat(Invariants.checkQuiescent(cache, base, cache, registry, true)).isEmpty();
  }
}
