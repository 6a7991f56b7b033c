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
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The five failures of the reference model manager, each reproduced as a deterministic schedule
 * against ModelKeeper: every schedule must end with the invariants intact.
 */
class ReferenceFailuresTest {

  private final TestRegistry registry = TestRegistry.of("x", "y", "z", "alias");
  private final BaseModelManager base =
      new BaseModelManager(
          registry,
          ManagerOptions.builder()
              .ticker(FakeTicker.autoAdvancing())
              .failureBackoff(Duration.ZERO, Duration.ZERO)
              .lifecycleTimeout(Duration.ofSeconds(10))
              .build());
  private final WithFixedSizeCache cache =
      new WithFixedSizeCache(new ModelManagerDecorator(base) {}, 2);

  @AfterEach
  void invariantsHold() {
    assertThat(Invariants.check(cache, base, cache, registry)).isEmpty();
  }

  /**
   * Failure 1 (lock generation split): remove(X) pauses inside clearCache(); a waiter queues on X's
   * lifecycle, then a newcomer arrives. In the reference system the newcomer found a retired lock
   * and loaded X while the waiter later loaded it again. Here both join one generation.
   */
  @Test
  void removePausedInClearCache_withWaiterAndNewcomer_oneConstructorAtATime() throws Exception {
    cache.addModel("x", "k");
    Gate clearing = new Gate();
    registry.last("x").pauseNextClear(clearing);
    Async<Void> remover = Async.run("remove", () -> cache.remove("x"));
    clearing.awaitEntered();
    Async<Void> waiter = Async.run("waiter", () -> cache.addModel("x", "k"));
    await().until(() -> base.reservations("x") == 2);
    Async<Void> newcomer = Async.run("newcomer", () -> cache.addModel("x", "k"));
    await().until(() -> base.reservations("x") == 3);

    assertThat(base.lifecycleTable()).containsExactly("x");
    clearing.open();
    remover.join();
    waiter.join();
    newcomer.join();

    assertThat(registry.constructions("x")).isEqualTo(2); // the first load and one reload
    assertThat(registry.monitor().violations()).isEmpty();
    assertThat(cache.lruOrder()).containsExactly("x");
  }

  /** Failure 1, load-failure path: joiners of a failing load share it; no second constructor. */
  @Test
  void loadFailsWhileOthersWait_noSecondConstructorStarts() throws Exception {
    Gate loading = new Gate();
    registry.pauseNextLoad("x", loading).failNextLoads("x", 1);
    Async<Void> loader = Async.run("loader", () -> cache.addModel("x", "k"));
    loading.awaitEntered();
    Async<Void> waiter = Async.run("waiter", () -> cache.addModel("x", "k"));
    await().until(() -> base.reservations("x") == 2);
    loading.open();

    assertThat(loader.joinFailure()).isInstanceOf(ModelLoadException.class);
    assertThat(waiter.joinFailure()).isInstanceOf(ModelLoadException.class);
    assertThat(registry.constructions("x")).isEqualTo(1);
    assertThat(base.lifecycleTable()).isEmpty();
    assertThat(cache.lruOrder()).isEmpty();
  }

  /**
   * Failure 1, timeout path: a waiter gives up while the holder still loads and another caller
   * waits; the generation stays registered, and the remaining callers still share one load.
   */
  @Test
  void waiterTimesOutWhileHolderLoads_generationKeptThenRetired() throws Exception {
    BaseModelManager shortWaits =
        new BaseModelManager(
            registry, ManagerOptions.builder().lifecycleTimeout(Duration.ofMillis(150)).build());
    Gate loading = new Gate();
    registry.pauseNextLoad("y", loading);
    Async<Void> holder = Async.run("holder", () -> shortWaits.addModel("y", "k"));
    loading.awaitEntered();

    assertThatThrownBy(() -> shortWaits.addModel("y", "k"))
        .isInstanceOf(LockTimeoutException.class)
        .hasMessageContaining("'y'")
        .hasMessageContaining("holder: load");
    assertThat(shortWaits.reservations("y")).isEqualTo(1);
    assertThat(shortWaits.lifecycleTable()).containsExactly("y");

    loading.open();
    holder.join();
    shortWaits.addModel("y", "k");
    assertThat(registry.constructions("y")).isEqualTo(1);
    assertThat(registry.monitor().violations()).isEmpty();
    shortWaits.remove("y");
    assertThat(shortWaits.lifecycleTable()).isEmpty();
  }

  /**
   * Failure 2 (decorator fast path): while remove(X) owns X's lifecycle, a warm addModel(X) through
   * the decorators waits for it and ends with X loaded.
   */
  @Test
  void warmAddDuringRemove_waitsAndEndsLoaded() throws Exception {
    cache.addModel("x", "k");
    Gate clearing = new Gate();
    registry.last("x").pauseNextClear(clearing);
    Async<Void> remover = Async.run("remove", () -> cache.remove("x"));
    clearing.awaitEntered();
    Async<Void> adder = Async.run("add", () -> cache.addModel("x", "k"));
    await().until(() -> base.reservations("x") == 2);

    assertThat(adder.isDone()).isFalse();
    clearing.open();
    remover.join();
    adder.join();

    assertThat(cache.contains("x")).isTrue();
    assertThat(cache.lruOrder()).containsExactly("x");
    assertThat(registry.constructions("x")).isEqualTo(2);
  }

  /** Failure 3 (remove rollback): a failed clearCache() keeps X registered at its LRU position. */
  @Test
  void removeWhenClearCacheThrows_keepsLruPosition() {
    cache.addModel("x", "k");
    cache.addModel("y", "k");
    registry.last("x").failClearWith(new IllegalStateException("busy device"));

    assertThatThrownBy(() -> cache.remove("x")).isInstanceOf(ModelUnloadException.class);

    assertThat(cache.contains("x")).isTrue();
    assertThat(cache.lruOrder()).containsExactly("x", "y");
    registry.last("x").failClearWith(null);
  }

  /** Failure 3 (single model): after the failed remove, lruOrder() is exactly [X]. */
  @Test
  void removeOnlyModelWhenClearCacheThrows_lruOrderStillHoldsIt() {
    cache.addModel("x", "k");
    registry.last("x").failClearWith(new IllegalStateException("busy device"));

    assertThatThrownBy(() -> cache.remove("x")).isInstanceOf(ModelUnloadException.class);

    assertThat(cache.lruOrder()).containsExactly("x");
    registry.last("x").failClearWith(null);
  }

  /**
   * Failure 3 (eviction rollback): the LRU victim's clearCache() throws; it stays registered in
   * place and the next candidate is evicted instead.
   */
  @Test
  void evictionWhenClearCacheThrows_keepsVictimAndEvictsNext() {
    cache.addModel("x", "k");
    cache.addModel("y", "k");
    TestModel x = registry.last("x").failClearWith(new IllegalStateException("stuck"));

    cache.addModel("z", "k");

    assertThat(cache.keys()).containsExactlyInAnyOrder("x", "z");
    assertThat(cache.lruOrder()).containsExactly("x", "z");
    assertThat(registry.last("y").clears()).isEqualTo(1);
    assertThat(x.clears()).isZero();
    x.failClearWith(null);
  }

  /** Failure 3 (nothing evictable): every candidate fails to clear; the add loads nothing. */
  @Test
  void evictionWhenEveryClearCacheThrows_refusesLoadAndLoadsNothing() {
    cache.addModel("x", "k");
    cache.addModel("y", "k");
    registry.last("x").failClearWith(new IllegalStateException("stuck"));
    registry.last("y").failClearWith(new IllegalStateException("stuck"));

    assertThatThrownBy(() -> cache.addModel("z", "k"))
        .isInstanceOf(CapacityExceededException.class)
        .hasMessageContaining("'z'")
        .hasMessageContaining("models 2/2");

    assertThat(registry.constructions("z")).isZero();
    assertThat(cache.lruOrder()).containsExactly("x", "y");
    registry.last("x").failClearWith(null);
    registry.last("y").failClearWith(null);
  }

  /** Failure 4 (duplicates): concurrent cold adds of one ID queue it once and construct it once. */
  @Test
  void concurrentColdAdds_queueOnceAndConstructOnce() throws Exception {
    Gate loading = new Gate();
    registry.pauseNextLoad("x", loading);
    List<Async<Void>> adders = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      adders.add(Async.run("add-" + i, () -> cache.addModel("x", "k")));
    }
    loading.awaitEntered();
    await().until(() -> base.reservations("x") == 6);
    loading.open();
    for (Async<Void> a : adders) {
      a.join();
    }

    assertThat(cache.lruOrder()).containsExactly("x");
    assertThat(registry.constructions("x")).isEqualTo(1);
  }

  /**
   * Failure 5 (alias queueing): the alias is what is asked of the registry, queued and locked, in
   * every layer; an alias whose load fails is not queued.
   */
  @Test
  void addWithAlias_queuesTheAliasOnlyWhenLoaded() {
    registry.failNextLoads("alias", 1);
    assertThatThrownBy(() -> cache.addModel("x", "k", "alias"))
        .isInstanceOf(ModelLoadException.class);
    assertThat(cache.lruOrder()).isEmpty();

    cache.addModel("x", "k", "alias");

    assertThat(cache.lruOrder()).containsExactly("alias");
    assertThat(cache.keys()).containsExactly("alias");
    assertThat(cache.contains("x")).isFalse();
    assertThat(registry.lookups()).containsOnly("alias");
    assertThat(registry.requestedIds()).containsOnly("x");
  }
}
