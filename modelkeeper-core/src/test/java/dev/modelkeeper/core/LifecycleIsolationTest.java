package dev.modelkeeper.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.modelkeeper.core.testkit.Async;
import dev.modelkeeper.core.testkit.Evictions;
import dev.modelkeeper.core.testkit.Gate;
import dev.modelkeeper.core.testkit.Invariants;
import dev.modelkeeper.core.testkit.TestRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** No lock shared by different identifiers is held across slow work. */
class LifecycleIsolationTest {

  private final TestRegistry registry = TestRegistry.of("a", "b", "c");
  private final BaseModelManager base =
      new BaseModelManager(
          registry, ManagerOptions.builder().lifecycleTimeout(Duration.ofSeconds(10)).build());
  private final WithFixedSizeCache cache = new WithFixedSizeCache(base, 3);

  @Test
  void blockedLoadOfA_doesNotDelayAddRemoveContainsOfB() throws Exception {
    Gate loadingA = new Gate();
    registry.pauseNextLoad("a", loadingA);
    Async<Void> loaderA = Async.run("load-a", () -> cache.addModel("a", "k"));
    loadingA.awaitEntered();

    Async<Boolean> workOnB =
        Async.call(
            "work-on-b",
            () -> {
              cache.addModel("b", "k");
              boolean loaded = cache.contains("b");
              cache.remove("b");
              cache.addModel("b", "k");
              return loaded && !cache.contains("a");
            });

    assertThat(workOnB.join()).isTrue();
    assertThat(loaderA.isDone()).isFalse();
    loadingA.open();
    loaderA.join();
    assertThat(cache.keys()).containsExactlyInAnyOrder("a", "b");
    assertThat(Invariants.check(cache, base, cache, registry)).isEmpty();
  }

  @Test
  void blockedClearOfA_doesNotDelayLoadOfB() throws Exception {
    cache.addModel("a", "k");
    Gate clearingA = new Gate();
    registry.last("a").pauseNextClear(clearingA);
    Async<Void> removerA = Async.run("remove-a", () -> cache.remove("a"));
    clearingA.awaitEntered();

    Async<Void> loaderB = Async.run("load-b", () -> cache.addModel("b", "k"));
    loaderB.join();

    assertThat(cache.contains("b")).isTrue();
    assertThat(cache.contains("a")).isTrue(); // still registered until clearCache() returns
    clearingA.open();
    removerA.join();
    assertThat(cache.keys()).containsExactly("b");
    assertThat(Invariants.check(cache, base, cache, registry)).isEmpty();
  }

  @Test
  void manyWaitersOnOneGeneration_allServedByOneLoad() throws Exception {
    Gate loading = new Gate();
    registry.pauseNextLoad("c", loading);
    Async<Void> holder = Async.run("holder", () -> cache.addModel("c", "k"));
    loading.awaitEntered();
    Async<?>[] waiters = new Async<?>[8];
    for (int i = 0; i < waiters.length; i++) {
      waiters[i] =
          i % 2 == 0
              ? Async.run("add-" + i, () -> cache.addModel("c", "k"))
              : Async.call(
                  "acquire-" + i,
                  () -> {
                    try (ModelLease lease = cache.acquire("c", "k")) {
                      return lease.model();
                    }
                  });
    }
    await().until(() -> base.reservations("c") == 9);
    assertThat(base.lifecycleTable()).containsExactly("c");

    loading.open();
    holder.join();
    for (Async<?> w : waiters) {
      w.join();
    }
    assertThat(registry.constructions("c")).isEqualTo(1);
    assertThat(base.reservations("c")).isZero();
    assertThat(base.stats().leaseWaits()).isEqualTo(4);
    assertThat(Invariants.check(cache, base, cache, registry)).isEmpty();
  }

  @Test
  void afterQuiescence_lifecycleTableHoldsOnlyLoadedModels() {
    for (int round = 0; round < 3; round++) {
      cache.addModel("a", "k");
      cache.addModel("b", "k");
      cache.remove("a");
      try {
        cache.addModel("missing", "k");
      } catch (ModelNotFoundException expected) {
        // unknown IDs leave nothing behind
      }
      cache.remove("never-loaded");
      Evictions.of(cache).evict("c", RemovalCause.COUNT_BUDGET);
    }

    assertThat(base.lifecycleTable()).containsExactly("b");
    assertThat(Invariants.check(cache, base, cache, registry)).isEmpty();
  }
}
