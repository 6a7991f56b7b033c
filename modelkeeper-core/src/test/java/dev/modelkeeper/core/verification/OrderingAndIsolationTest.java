package dev.modelkeeper.core.verification;

import static org.assertj.core.api.Assertions.assertThat;

import dev.modelkeeper.core.BaseModelManager;
import dev.modelkeeper.core.ManagerOptions;
import dev.modelkeeper.core.ModelLease;
import dev.modelkeeper.core.ModelManager;
import dev.modelkeeper.core.ModelManagerDecorator;
import dev.modelkeeper.core.WithFixedSizeCache;
import dev.modelkeeper.core.testkit.Async;
import dev.modelkeeper.core.testkit.FakeTicker;
import dev.modelkeeper.core.testkit.Gate;
import dev.modelkeeper.core.testkit.Invariants;
import dev.modelkeeper.core.testkit.TestRegistry;
import org.junit.jupiter.api.Test;

/**
 * Schedules the model checker cannot express: a decorator must not answer from an unlocked view
 * while the same ID is being removed (invariant 5), and no lock shared by different IDs may be held
 * while one ID constructs or clears (invariant 4). Each schedule is pinned with gates.
 */
class OrderingAndIsolationTest {

  private final TestRegistry registry = TestRegistry.of("a", "b", "x");
  private final BaseModelManager base =
      new BaseModelManager(
          registry, ManagerOptions.builder().ticker(FakeTicker.autoAdvancing()).build());
  private final WithFixedSizeCache cache = new WithFixedSizeCache(base, 4);
  private final ModelManager top = new ModelManagerDecorator(cache) {};

  @Test
  void addModel_warmWhileRemoveClearsTheModel_waitsAndEndsLoaded() throws Exception {
    top.addModel("a", "key");
    Gate clearing = new Gate();
    registry.last("a").pauseNextClear(clearing);
    Async<Void> remove = Async.run("remove", () -> top.remove("a"));
    clearing.awaitEntered();

    Async<Void> add = Async.run("add", () -> top.addModel("a", "key"));
    add.awaitBlockedOrDone();
    clearing.open();
    remove.join();
    add.join();

    assertThat(top.contains("a")).as("a warm add issued during remove ends loaded").isTrue();
    assertThat(registry.constructions("a")).isEqualTo(2);
    assertThat(Invariants.checkQuiescent(top, base, cache, registry, true)).isEmpty();
  }

  @Test
  void addModel_aliasWarmWhileRemoveClearsIt_waitsAndEndsLoaded() throws Exception {
    top.addModel("a", "key", "x");
    Gate clearing = new Gate();
    registry.last("x").pauseNextClear(clearing);
    Async<Void> remove = Async.run("remove", () -> top.remove("x"));
    clearing.awaitEntered();

    Async<Void> add = Async.run("add", () -> top.addModel("a", "key", "x"));
    add.awaitBlockedOrDone();
    clearing.open();
    remove.join();
    add.join();

    assertThat(top.contains("x")).isTrue();
    assertThat(top.contains("a")).isFalse();
    assertThat(Invariants.checkQuiescent(top, base, cache, registry, true)).isEmpty();
  }

  @Test
  void addModel_ofBWhileConstructorOfAIsPaused_completesWithoutWaitingForA() throws Exception {
    Gate constructing = new Gate();
    registry.pauseNextLoad("a", constructing);
    Async<Void> loadA = Async.run("load a", () -> top.addModel("a", "key"));
    constructing.awaitEntered();

    Async<Void> loadB = Async.run("load b", () -> top.addModel("b", "key"));
    Async<Boolean> leaseB =
        Async.call(
            "lease b",
            () -> {
              try (ModelLease lease = top.acquire("b", "key")) {
                return lease.model() != null;
              }
            });
    try {
      loadB.join(); // fails after Gate.TIMEOUT_SECONDS if b waits for a's constructor
      assertThat(leaseB.join()).isTrue();
      assertThat(loadA.isDone()).as("a is still constructing").isFalse();
    } finally {
      constructing.open();
    }
    loadA.join();
    assertThat(top.keys()).containsExactlyInAnyOrder("a", "b");
    assertThat(Invariants.checkQuiescent(top, base, cache, registry, true)).isEmpty();
  }

  @Test
  void remove_ofBWhileClearOfAIsPaused_completesWithoutWaitingForA() throws Exception {
    top.addModel("a", "key");
    top.addModel("b", "key");
    Gate clearing = new Gate();
    registry.last("a").pauseNextClear(clearing);
    Async<Void> removeA = Async.run("remove a", () -> top.remove("a"));
    clearing.awaitEntered();

    Async<Void> removeB = Async.run("remove b", () -> top.remove("b"));
    try {
      removeB.join();
      assertThat(removeA.isDone()).isFalse();
    } finally {
      clearing.open();
    }
    removeA.join();
    assertThat(top.keys()).isEmpty();
    assertThat(Invariants.checkQuiescent(top, base, cache, registry, true)).isEmpty();
  }
}
