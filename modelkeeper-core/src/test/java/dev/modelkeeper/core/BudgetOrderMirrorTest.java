package dev.modelkeeper.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.modelkeeper.core.testkit.Async;
import dev.modelkeeper.core.testkit.Gate;
import dev.modelkeeper.core.testkit.Invariants;
import dev.modelkeeper.core.testkit.TestRegistry;
import java.time.Duration;
import org.assertj.core.api.Assertions;
import org.junit.jupiter.api.Test;

/**
 * Pins a spurious refusal: the budget's slots and the manager's LRU order disagreed for a moment. A
 * load linked its model into the order only after telling the budget {@code loaded}, and an unload
 * unlinked it before telling the budget {@code removed}. A load asking for room inside such a
 * window found the slot counted but no victim listed, nothing loading and no change of version, and
 * was refused with "nothing can be evicted" although room was about to appear. A second policy that
 * pauses on the event holds the window open.
 */
class BudgetOrderMirrorTest {

  private static final Duration CAPACITY_TIMEOUT = Duration.ofSeconds(5);

  /** A policy that pauses at a gate on one event of one identifier and is silent otherwise. */
  private static final class PausingPolicy implements ResidencyPolicy {
    final Gate onLoaded;
    final Gate onRemoved;
    final String id;

    PausingPolicy(String id, Gate onLoaded, Gate onRemoved) {
      this.id = id;
      this.onLoaded = onLoaded;
      this.onRemoved = onRemoved;
    }

    @Override
    public void admit(String resolvedId, long predictedBytes) {}

    @Override
    public void loaded(String resolvedId, long sizeBytes) {
      if (onLoaded != null && resolvedId.equals(id)) {
        onLoaded.pass();
      }
    }

    @Override
    public void loadFailed(String resolvedId) {}

    @Override
    public void removed(String resolvedId, RemovalCause cause) {
      if (onRemoved != null && resolvedId.equals(id)) {
        onRemoved.pass();
      }
    }

    @Override
    public void idle(String resolvedId) {}
  }

  /** The budget has heard {@code loaded}; the load has not finished (its other policies run). */
  @Test
  void loadAskingForRoom_whileAnotherLoadIsBeingAnnounced_waitsInsteadOfBeingRefused()
      throws Exception {
    TestRegistry registry = TestRegistry.of("first", "second");
    BaseModelManager base = new BaseModelManager(registry);
    WithFixedSizeCache cache =
        new WithFixedSizeCache(
            base, CacheOptions.builder(1).capacityTimeout(CAPACITY_TIMEOUT).build());
    Gate afterBudgetHeardLoaded = new Gate();
    base.attachPolicy(new PausingPolicy("first", afterBudgetHeardLoaded, null)); // after the budget

    Async<Void> first = Async.run("load-first", () -> cache.addModel("first", "k"));
    afterBudgetHeardLoaded.awaitEntered();
    Async<Void> second = Async.run("load-second", () -> cache.addModel("second", "k"));
    await()
        .atMost(Duration.ofSeconds(Gate.TIMEOUT_SECONDS))
        .until(() -> second.isDone() || cache.stats().capacityWaits() == 1);

    afterBudgetHeardLoaded.open();
    first.join();
    second.join(); // before the fix: CapacityExceededException "nothing can be evicted"

    assertThat(cache.keys()).containsExactly("second");
    assertThat(cache.stats().capacityRejections()).isZero();
    assertThat(Invariants.check(cache, base, cache, registry)).isEmpty();
  }

  /**
   * The model is cleared and out of the LRU order; the budget has not heard {@code removed} yet.
   */
  @Test
  void loadAskingForRoom_whileAnotherModelIsBeingRemoved_waitsInsteadOfBeingRefused()
      throws Exception {
    TestRegistry registry = TestRegistry.of("old", "new");
    BaseModelManager base = new BaseModelManager(registry);
    Gate beforeBudgetHearsRemoved = new Gate();
    base.attachPolicy(
        new PausingPolicy("old", null, beforeBudgetHearsRemoved)); // before the budget
    WithFixedSizeCache cache =
        new WithFixedSizeCache(
            base, CacheOptions.builder(1).capacityTimeout(CAPACITY_TIMEOUT).build());
    cache.addModel("old", "k");

    Async<Void> remover = Async.run("remove-old", () -> cache.remove("old"));
    beforeBudgetHearsRemoved.awaitEntered();
    Async<Void> loader = Async.run("load-new", () -> cache.addModel("new", "k"));
    await()
        .atMost(Duration.ofSeconds(Gate.TIMEOUT_SECONDS))
        .until(() -> loader.isDone() || cache.stats().capacityWaits() == 1);

    beforeBudgetHearsRemoved.open();
    remover.join();
    loader.join(); // before the fix: CapacityExceededException "nothing can be evicted"

    assertThat(cache.keys()).containsExactly("new");
    assertThat(cache.stats().capacityRejections()).isZero();
    assertThat(Invariants.check(cache, base, cache, registry)).isEmpty();
  }

  /** The fix must not turn a legitimate refusal into a wait: every resident model pinned. */
  @Test
  void loadIsStillRefusedAtOnce_whenEveryResidentModelIsPinned() {
    TestRegistry registry = TestRegistry.of("pinned", "other");
    BaseModelManager base = new BaseModelManager(registry);
    WithFixedSizeCache cache =
        new WithFixedSizeCache(
            base, CacheOptions.builder(1).capacityTimeout(Duration.ofMinutes(5)).build());
    cache.addModel("pinned", "k");
    cache.pin("pinned");

    Assertions.assertThatThrownBy(() -> cache.addModel("other", "k"))
        .isInstanceOf(CapacityExceededException.class)
        .hasMessageContaining("nothing can be evicted");
    assertThat(cache.stats().capacityWaits()).isZero();
    assertThat(Invariants.check(cache, base, cache, registry)).isEmpty();
  }
}
