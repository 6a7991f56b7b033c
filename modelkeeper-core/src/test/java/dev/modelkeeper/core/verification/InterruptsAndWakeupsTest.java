package dev.modelkeeper.core.verification;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.modelkeeper.core.BaseModelManager;
import dev.modelkeeper.core.CacheOptions;
import dev.modelkeeper.core.CapacityExceededException;
import dev.modelkeeper.core.LifecycleInterruptedException;
import dev.modelkeeper.core.LockTimeoutException;
import dev.modelkeeper.core.ManagerOptions;
import dev.modelkeeper.core.Model;
import dev.modelkeeper.core.ModelLease;
import dev.modelkeeper.core.ModelUnloadException;
import dev.modelkeeper.core.RemovalCause;
import dev.modelkeeper.core.WithFixedSizeCache;
import dev.modelkeeper.core.testkit.Async;
import dev.modelkeeper.core.testkit.FakeTicker;
import dev.modelkeeper.core.testkit.Gate;
import dev.modelkeeper.core.testkit.Invariants;
import dev.modelkeeper.core.testkit.QuietLogs;
import dev.modelkeeper.core.testkit.TestRegistry;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Every wait of the lifecycle ends: by a timeout, by an interrupt (which stays set on the
 * interrupted thread, so its owner still sees it), or by the event that makes room. The waits for
 * room are given deadlines far beyond the join timeout, so a lost wake-up fails the test instead of
 * being rescued by the deadline.
 */
@ExtendWith(QuietLogs.class)
class InterruptsAndWakeupsTest {

  private static final Duration LONG = Duration.ofSeconds(60);

  private final TestRegistry registry = TestRegistry.of("a", "b", "c");
  private final BaseModelManager base =
      new BaseModelManager(
          registry,
          ManagerOptions.builder()
              .ticker(FakeTicker.manual())
              .lifecycleTimeout(LONG)
              .drainTimeout(LONG)
              .build());

  /** How a call ended: its failure, and whether its thread's interrupt flag was set afterwards. */
  private record Ending(Throwable failure, boolean interruptFlag) {}

  /** Runs {@code call} on its own thread, interrupted first when asked; the caller joins it. */
  private static Async<Ending> start(String name, boolean interruptFirst, Callable<?> call) {
    return Async.call(
        name,
        () -> {
          if (interruptFirst) {
            Thread.currentThread().interrupt();
          }
          try {
            call.call();
            return new Ending(new AssertionError("returned normally"), false);
          } catch (Exception e) {
            return new Ending(e, Thread.currentThread().isInterrupted());
          }
        });
  }

  private static Ending interrupted(Callable<?> call) throws Exception {
    return start("interrupted caller", true, call).join();
  }

  private WithFixedSizeCache cache(int maxSize) {
    return new WithFixedSizeCache(
        base, CacheOptions.builder(maxSize).capacityTimeout(LONG).build());
  }

  // ---------------------------------------------------------------- interrupts

  @Test
  void interruptedWhileWaitingForALoad_failsAndKeepsTheFlag() throws Exception {
    Gate constructing = new Gate();
    registry.pauseNextLoad("a", constructing);
    Async<Void> loader = Async.run("load a", () -> base.addModel("a", "key"));
    constructing.awaitEntered();
    try {
      Ending outcome = interrupted(() -> base.acquire("a", "key"));
      assertThat(outcome.failure())
          .isInstanceOf(LifecycleInterruptedException.class)
          .hasMessage("interrupted while waiting for the lifecycle of 'a'");
      assertThat(outcome.interruptFlag()).as("interrupt flag kept").isTrue();
    } finally {
      constructing.open();
    }
    loader.join();
    assertThat(base.reservations("a")).isZero();
  }

  @Test
  void interruptedWhileRemoveDrainsLeases_failsKeepsTheFlagAndTheModelStaysLeasable()
      throws Exception {
    ModelLease held = base.acquire("a", "key");
    Ending outcome =
        interrupted(
            () -> {
              base.remove("a");
              return null;
            });
    assertThat(outcome.failure())
        .isInstanceOf(LifecycleInterruptedException.class)
        .hasMessage("interrupted while remove of 'a' waited for leases to close");
    assertThat(outcome.interruptFlag()).as("interrupt flag kept").isTrue();
    try (ModelLease another = base.acquire("a", "key")) {
      assertThat(another.model()).isSameAs(held.model());
    }
    held.close();
    base.remove("a");
    assertThat(Invariants.check(base, base, null, registry)).isEmpty();
  }

  @Test
  void interruptedWhileWaitingForRoom_failsAndKeepsTheFlag() throws Exception {
    WithFixedSizeCache cache = cache(1);
    try (ModelLease held = cache.acquire("a", "key")) {
      Async<Ending> loader =
          start(
              "load b",
              false,
              () -> {
                cache.addModel("b", "key");
                return null;
              });
      await().atMost(Duration.ofSeconds(10)).until(() -> cache.stats().capacityWaits() == 1);
      loader.thread().interrupt();
      Ending outcome = loader.join();
      assertThat(outcome.failure())
          .isInstanceOf(LifecycleInterruptedException.class)
          .hasMessage("interrupted while 'b' waited for room in the budget");
      assertThat(outcome.interruptFlag()).as("interrupt flag kept").isTrue();
      assertThat(held.model()).isNotNull();
    }
    assertThat(cache.keys()).containsExactly("a");
    assertThat(cache.usedSlots()).isEqualTo(1);
    assertThat(Invariants.checkQuiescent(cache, base, cache, registry, true)).isEmpty();
  }

  @Test
  void interruptedBeforeTakingTheBudgetLock_failsAndKeepsTheFlag() throws Exception {
    WithFixedSizeCache cache = cache(1);
    Ending outcome = interrupted(cache::usedSlots);
    assertThat(outcome.failure())
        .isInstanceOf(LifecycleInterruptedException.class)
        .hasMessage("interrupted while waiting for the LRU lock");
    assertThat(outcome.interruptFlag()).as("interrupt flag kept").isTrue();
  }

  @Test
  void clearCacheThrowingInterruptedException_keepsTheModelAndTheFlag() throws Exception {
    Model stubborn =
        () -> {
          throw new InterruptedException("clear interrupted");
        };
    BaseModelManager m = new BaseModelManager(registry, Map.of("m", stubborn));
    Ending outcome =
        start(
                "remove m",
                false,
                () -> {
                  m.remove("m");
                  return null;
                })
            .join();
    assertThat(outcome.failure())
        .isInstanceOf(ModelUnloadException.class)
        .hasRootCauseInstanceOf(InterruptedException.class);
    assertThat(outcome.interruptFlag()).as("interrupt flag restored").isTrue();
    assertThat(m.contains("m")).isTrue();
  }

  // ---------------------------------------------------------------- timeouts

  @Test
  void removeWaitingForALoadPastTheLifecycleTimeout_failsWithALockTimeout() throws Exception {
    BaseModelManager m =
        new BaseModelManager(
            registry, ManagerOptions.builder().lifecycleTimeout(Duration.ofMillis(100)).build());
    Gate constructing = new Gate();
    registry.pauseNextLoad("a", constructing);
    Async<Void> loader = Async.run("load a", () -> m.addModel("a", "key"));
    constructing.awaitEntered();
    try {
      Throwable failure = Async.run("remove a", () -> m.remove("a")).joinFailure();
      assertThat(failure)
          .isInstanceOf(LockTimeoutException.class)
          .hasMessageContaining("waiting for the lifecycle of 'a' (holder: load");
    } finally {
      constructing.open();
    }
    loader.join();
    assertThat(m.contains("a")).as("the load was not disturbed").isTrue();
  }

  // ---------------------------------------------------------------- wake-ups of a load waiting for
  // room

  @Test
  void loadWaitingForALeasedVictim_proceedsWhenTheLeaseCloses() throws Exception {
    WithFixedSizeCache cache = cache(1);
    ModelLease held = cache.acquire("a", "key");
    Async<Void> loader = Async.run("load b", () -> cache.addModel("b", "key"));
    await().atMost(Duration.ofSeconds(10)).until(() -> cache.stats().capacityWaits() == 1);
    assertThat(cache.keys()).containsExactly("a");
    held.close();
    loader.join();
    assertThat(cache.keys()).containsExactly("b");
    assertThat(Invariants.checkQuiescent(cache, base, cache, registry, true)).isEmpty();
  }

  @Test
  void loadWaitingForRoom_isWokenWhenAVictimsClearCacheFails() throws Exception {
    WithFixedSizeCache cache = cache(1);
    cache.addModel("a", "key");
    Gate clearing = new Gate();
    registry.last("a").pauseNextClear(clearing).failNextClears(1);
    Async<Void> remover = Async.run("remove a", () -> cache.remove("a"));
    clearing.awaitEntered();
    // the only victim is unloading: the load of b waits for it
    Async<Void> loader = Async.run("load b", () -> cache.addModel("b", "key"));
    await().atMost(Duration.ofSeconds(10)).until(() -> cache.stats().capacityWaits() == 1);
    clearing.open();
    assertThat(remover.joinFailure()).isInstanceOf(ModelUnloadException.class);
    // a is back in READY; the waiter hears of it, evicts it (its second clear succeeds) and loads
    loader.join();
    assertThat(cache.keys()).containsExactly("b");
    assertThat(registry.last("a").clears()).isEqualTo(1);
    assertThat(Invariants.checkQuiescent(cache, base, cache, registry, true)).isEmpty();
  }

  @Test
  void loadWaitingForRoom_isWokenByUnpin() throws Exception {
    WithFixedSizeCache cache = cache(2);
    cache.addModel("a", "key");
    cache.pin("a");
    assertThat(cache.pinned()).containsExactly("a");
    ModelLease held = cache.acquire("b", "key");
    Async<Void> loader = Async.run("load c", () -> cache.addModel("c", "key"));
    await().atMost(Duration.ofSeconds(10)).until(() -> cache.stats().capacityWaits() == 1);
    cache.unpin("a");
    loader.join();
    assertThat(cache.keys()).containsExactlyInAnyOrder("b", "c");
    assertThat(cache.pinned()).isEmpty();
    held.close();
    cache.unpin("a"); // not pinned: nothing to do
    assertThat(Invariants.checkQuiescent(cache, base, cache, registry, true)).isEmpty();
  }

  // ---------------------------------------------------------------- the budget's refusals and
  // causes

  @Test
  void byteBudgetFullWhileOneSlotIsStillFree_evictsForBytes() {
    registry.size("a", 100).size("b", 100).size("c", 100);
    WithFixedSizeCache cache =
        new WithFixedSizeCache(base, CacheOptions.builder(3).maxBytes(200).build());
    cache.addModel("a", "key");
    cache.addModel("b", "key");
    cache.addModel("c", "key");
    assertThat(base.stats().evictions())
        .containsEntry(RemovalCause.BYTE_BUDGET, 1L)
        .containsEntry(RemovalCause.COUNT_BUDGET, 0L);
  }

  @Test
  void refusalWithoutWaiting_statesTheBudgetAndNoWaitedTime() {
    WithFixedSizeCache cache = cache(1);
    cache.addModel("a", "key");
    cache.pin("a");
    assertThatThrownBy(() -> cache.addModel("b", "key"))
        .isInstanceOf(CapacityExceededException.class)
        .hasMessage(
            "cannot load 'b': nothing can be evicted (models 1/1 of which 0 loading, pinned [a])");

    registry.size("a", 40).size("c", 70);
    WithFixedSizeCache bytes =
        new WithFixedSizeCache(
            new BaseModelManager(registry), CacheOptions.builder(5).maxBytes(100).build());
    bytes.addModel("a", "key");
    bytes.pin("a");
    assertThatThrownBy(() -> bytes.addModel("c", "key"))
        .isInstanceOf(CapacityExceededException.class)
        .hasMessage(
            "cannot load 'c': nothing can be evicted (models 1/5 of which 0 loading, bytes 40/100,"
                + " pinned [a])");
  }

  @Test
  void refusalAfterWaitingForALoadingModel_countsItAsLoading() throws Exception {
    WithFixedSizeCache cache =
        new WithFixedSizeCache(
            base, CacheOptions.builder(1).capacityTimeout(Duration.ofMillis(50)).build());
    Gate constructing = new Gate();
    registry.pauseNextLoad("a", constructing);
    Async<Void> loader = Async.run("load a", () -> cache.addModel("a", "key"));
    constructing.awaitEntered();
    try {
      assertThatThrownBy(() -> cache.addModel("b", "key"))
          .isInstanceOf(CapacityExceededException.class)
          .hasMessage(
              "cannot load 'b': no room after waiting for PT0.05S (models 1/1 of which 1 loading,"
                  + " pinned [])");
    } finally {
      constructing.open();
    }
    loader.join();
    assertThat(cache.keys()).containsExactly("a");
  }
}
