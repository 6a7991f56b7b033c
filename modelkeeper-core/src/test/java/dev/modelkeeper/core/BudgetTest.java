package dev.modelkeeper.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.modelkeeper.core.testkit.Async;
import dev.modelkeeper.core.testkit.FakeTicker;
import dev.modelkeeper.core.testkit.Gate;
import dev.modelkeeper.core.testkit.Invariants;
import dev.modelkeeper.core.testkit.TestModel;
import dev.modelkeeper.core.testkit.TestRegistry;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** Count and byte budgets: LRU eviction, pins, leases, waiting for room, nesting. */
class BudgetTest {

  private final TestRegistry registry = TestRegistry.of("a", "b", "c", "d");
  private final BaseModelManager base =
      new BaseModelManager(
          registry,
          ManagerOptions.builder()
              .ticker(FakeTicker.autoAdvancing())
              .lifecycleTimeout(Duration.ofSeconds(10))
              .build());

  private WithFixedSizeCache cache(int maxSize, long maxBytes, Duration capacityTimeout) {
    return new WithFixedSizeCache(
        base,
        CacheOptions.builder(maxSize).maxBytes(maxBytes).capacityTimeout(capacityTimeout).build());
  }

  @Test
  void fullCache_evictsLeastRecentlyUsed() {
    WithFixedSizeCache cache = cache(2, 0, Duration.ofSeconds(5));
    cache.addModel("a", "k");
    cache.addModel("b", "k");
    cache.addModel("a", "k"); // warm add refreshes recency: b is now the oldest

    cache.addModel("c", "k");

    assertThat(cache.lruOrder()).containsExactly("a", "c");
    assertThat(registry.last("b").clears()).isEqualTo(1);
    assertThat(cache.stats().evictions()).containsEntry(RemovalCause.COUNT_BUDGET, 1L);
    assertThat(Invariants.check(cache, base, cache, registry)).isEmpty();
  }

  @Test
  void aliasLoad_thenRemoveByAlias_freesTheSlotItTook() {
    registry.add("x");
    WithFixedSizeCache cache = cache(1, 0, Duration.ZERO);
    cache.addModel("a", "k", "x");
    assertThat(cache.usedSlots()).isEqualTo(1);

    cache.remove("x");
    assertThat(cache.usedSlots()).isZero();
    cache.addModel("b", "k"); // the slot of x is free: no eviction, no refusal

    assertThat(cache.keys()).containsExactly("b");
    assertThat(cache.stats().evictionsTotal()).isZero();
    assertThat(Invariants.check(cache, base, cache, registry)).isEmpty();
  }

  @Test
  void acquire_refreshesRecency() {
    WithFixedSizeCache cache = cache(2, 0, Duration.ofSeconds(5));
    cache.addModel("a", "k");
    cache.addModel("b", "k");
    cache.acquire("a", "k").close();

    assertThat(cache.lruOrder()).containsExactly("b", "a");
  }

  @Test
  void aLeaseThatFindsItsReadStripeFull_drainsTheStripe_andItsOwnUseCounts() {
    WithFixedSizeCache cache = cache(2, 0, Duration.ofSeconds(5));
    cache.addModel("a", "k");
    cache.addModel("b", "k");
    cache.acquire("b", "k").close();
    for (int i = 1; i < ReadBuffer.CAPACITY; i++) {
      cache.acquire("a", "k").close();
    }
    cache.acquire("b", "k").close(); // this thread's stripe of the read buffer is full now

    assertThat(cache.lruOrder()).containsExactly("a", "b");
  }

  @Test
  void zeroCapacityTimeout_stillEvictsAnIdleVictim() {
    WithFixedSizeCache cache = cache(1, 0, Duration.ZERO);
    cache.addModel("a", "k");

    cache.addModel("b", "k");

    assertThat(cache.lruOrder()).containsExactly("b");
    assertThat(cache.stats().evictions()).containsEntry(RemovalCause.COUNT_BUDGET, 1L);
  }

  @Test
  void leasesTakenOnThreadsOfEveryStripe_areAllReleased_soTheModelStaysEvictable()
      throws InterruptedException {
    WithFixedSizeCache cache = cache(1, 0, Duration.ZERO);
    cache.addModel("a", "k");
    Set<Integer> stripes = new HashSet<>();
    for (int started = 0; stripes.size() < LifecycleEntry.STRIPES && started < 500; started++) {
      Thread t = new Thread(() -> cache.acquire("a", "k").close());
      t.start();
      t.join(10_000);
      assertThat(t.isAlive()).as("a lease on a thread of its own").isFalse();
      stripes.add(LifecycleEntry.stripeOf(t.getId()));
    }
    assertThat(stripes).hasSize(LifecycleEntry.STRIPES);

    cache.addModel("b", "k"); // refused at once if any lease of a were still counted

    assertThat(cache.lruOrder()).containsExactly("b");
  }

  @Test
  void leasedModel_isSkippedAndNextVictimChosen() {
    WithFixedSizeCache cache = cache(2, 0, Duration.ofSeconds(5));
    cache.addModel("a", "k");
    cache.addModel("b", "k");
    try (ModelLease lease = cache.acquire("a", "k")) {
      assertThat(cache.lruOrder()).containsExactly("b", "a"); // leasing refreshed a
      cache.addModel("b", "k"); // now a is the least recently used, but leased
      cache.addModel("c", "k");

      assertThat(cache.keys()).containsExactlyInAnyOrder("a", "c");
      assertThat(registry.last("b").clears()).isEqualTo(1);
      assertThat(lease.model()).isSameAs(registry.last("a"));
      assertThat(registry.last("a").clears()).isZero();
    }
    assertThat(Invariants.check(cache, base, cache, registry)).isEmpty();
  }

  @Test
  void pinnedModels_areNeverEvicted() {
    WithFixedSizeCache cache = cache(2, 0, Duration.ofSeconds(5));
    cache.pin("a");
    cache.addModel("a", "k");
    cache.addModel("b", "k");

    cache.addModel("c", "k");

    assertThat(cache.keys()).containsExactlyInAnyOrder("a", "c");
    assertThat(Invariants.check(cache, base, cache, registry)).isEmpty();
  }

  @Test
  void cacheFullOfPinnedModels_refusesNewLoadsAtOnce() {
    WithFixedSizeCache cache = cache(2, 0, Duration.ofSeconds(30));
    cache.pin("a");
    cache.pin("b");
    cache.addModel("a", "k");
    cache.addModel("b", "k");

    assertThatThrownBy(() -> cache.addModel("c", "k"))
        .isInstanceOf(CapacityExceededException.class)
        .hasMessageContaining("nothing can be evicted")
        .hasMessageContaining("models 2/2");

    assertThat(registry.constructions("c")).isZero();
    assertThat(cache.stats().capacityRejections()).isEqualTo(1);
    cache.unpin("b");
    cache.addModel("c", "k");
    assertThat(cache.keys()).containsExactlyInAnyOrder("a", "c");
  }

  @Test
  void capacityWait_endsWhenLeaseCloses() throws Exception {
    WithFixedSizeCache cache = cache(1, 0, Duration.ofSeconds(10));
    ModelLease lease = cache.acquire("a", "k");
    Async<Model> loaderB =
        Async.call(
            "acquire-b",
            () -> {
              try (ModelLease b = cache.acquire("b", "k")) {
                return b.model();
              }
            });
    await().until(() -> cache.stats().capacityWaits() == 1);

    assertThat(registry.constructions("b")).isZero();
    lease.close();

    assertThat(loaderB.join()).isSameAs(registry.last("b"));
    assertThat(registry.last("a").clears()).isEqualTo(1);
    assertThat(Invariants.check(cache, base, cache, registry)).isEmpty();
  }

  @Test
  void capacityWait_timesOutWithBudgetState() {
    WithFixedSizeCache cache = cache(1, 0, Duration.ofMillis(100));
    try (ModelLease lease = cache.acquire("a", "k")) {
      assertThatThrownBy(() -> cache.acquire("b", "k"))
          .isInstanceOf(CapacityExceededException.class)
          .hasMessageContaining("'b'")
          .hasMessageContaining("no room after waiting")
          .hasMessageContaining("models 1/1");
      assertThat(lease.model()).isSameAs(registry.last("a"));
    }
    assertThat(registry.constructions("b")).isZero();
    assertThat(cache.stats().capacityRejections()).isEqualTo(1);
    assertThat(Invariants.check(cache, base, cache, registry)).isEmpty();
  }

  @Test
  void byteBudget_evictsUntilTheNewModelFits() {
    registry.size("a", 40).size("b", 40).size("c", 70);
    WithFixedSizeCache cache = cache(10, 100, Duration.ofSeconds(5));
    cache.addModel("a", "k");
    cache.addModel("b", "k");

    cache.addModel("c", "k");

    assertThat(cache.keys()).containsExactly("c");
    assertThat(cache.usedBytes()).isEqualTo(70);
    assertThat(cache.stats().evictions()).containsEntry(RemovalCause.BYTE_BUDGET, 2L);
    assertThat(cache.stats().residentBytes()).isEqualTo(70);
  }

  @Test
  void byteBudget_modelLargerThanBudget_refusedBeforeConstructing() {
    registry.size("a", 200);
    WithFixedSizeCache cache = cache(10, 100, Duration.ofSeconds(5));

    assertThatThrownBy(() -> cache.addModel("a", "k"))
        .isInstanceOf(CapacityExceededException.class)
        .hasMessageContaining("more than the whole byte budget");
    assertThat(registry.constructions("a")).isZero();
  }

  @Test
  void byteBudget_countsUnloadingModelsUntilClearCacheReturns() throws Exception {
    registry.size("a", 60).size("b", 60);
    WithFixedSizeCache cache = cache(10, 100, Duration.ofSeconds(10));
    cache.addModel("a", "k");
    Gate clearingA = new Gate();
    registry.last("a").pauseNextClear(clearingA);
    Async<Void> removerA = Async.run("remove-a", () -> cache.remove("a"));
    clearingA.awaitEntered();
    Async<Void> loaderB = Async.run("load-b", () -> cache.addModel("b", "k"));
    await().until(() -> cache.stats().capacityWaits() == 1);

    assertThat(registry.constructions("b")).isZero();
    assertThat(cache.usedBytes()).isEqualTo(60);
    clearingA.open();
    removerA.join();
    loaderB.join();

    assertThat(cache.keys()).containsExactly("b");
    assertThat(cache.usedBytes()).isEqualTo(60);
  }

  @Test
  void byteBudget_neverExceededAtAnyLoad_countingLoadingModels() throws Exception {
    registry.size("a", 30).size("b", 30).size("c", 30).size("d", 30);
    WithFixedSizeCache cache = cache(10, 70, Duration.ofSeconds(10));
    List<Long> seenAtLoad = new CopyOnWriteArrayList<>();
    registry.duringLoad(() -> seenAtLoad.add(cache.usedBytes()));
    Async<?>[] loaders = new Async<?>[8];
    for (int i = 0; i < loaders.length; i++) {
      String id = List.of("a", "b", "c", "d").get(i % 4);
      loaders[i] =
          Async.run(
              "load-" + i,
              () -> {
                for (int n = 0; n < 50; n++) {
                  try (ModelLease lease = cache.acquire(id, "k")) {
                    ((TestModel) lease.model()).beginUse();
                    ((TestModel) lease.model()).endUse();
                  }
                }
              });
    }
    for (Async<?> l : loaders) {
      l.join();
    }

    assertThat(seenAtLoad)
        .isNotEmpty()
        .allSatisfy(used -> assertThat(used).isLessThanOrEqualTo(70));
    assertThat(cache.usedBytes()).isLessThanOrEqualTo(70);
    assertThat(Invariants.check(cache, base, cache, registry)).isEmpty();
  }

  @Test
  void largerThanPredicted_evictsIdleModelsToFitAgain() {
    registry.size("a", 40).size("b", 40).actualSize("b", 90);
    WithFixedSizeCache cache = cache(10, 100, Duration.ofSeconds(5));
    cache.addModel("a", "k");

    cache.addModel("b", "k");

    assertThat(cache.keys()).containsExactly("b");
    assertThat(cache.usedBytes()).isEqualTo(90);
  }

  @Test
  void nestedBudgets_eachHoldsItsOwn() {
    WithFixedSizeCache inner = new WithFixedSizeCache(base, 3);
    WithFixedSizeCache outer = new WithFixedSizeCache(new ModelManagerDecorator(inner) {}, 2);
    outer.addModel("a", "k");
    outer.addModel("b", "k");
    outer.addModel("c", "k");

    assertThat(outer.lruOrder()).containsExactly("b", "c");
    assertThat(inner.lruOrder()).containsExactly("b", "c");
    assertThat(Invariants.check(outer, base, outer, registry)).isEmpty();
    assertThat(Invariants.check(outer, base, inner, registry)).isEmpty();
  }

  @Test
  void budgetOverPopulatedManager_startsWithItsModels() {
    BaseModelManager populated =
        new BaseModelManager(registry, Map.of("a", TestModel.of("a"), "b", TestModel.of("b")));

    WithFixedSizeCache cache = new WithFixedSizeCache(populated, 2);

    assertThat(cache.lruOrder()).containsExactlyInAnyOrder("a", "b");
    cache.addModel("c", "k");
    assertThat(cache.keys()).hasSize(2).contains("c");
  }
}
