package dev.modelkeeper.core.verification;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.modelkeeper.core.BaseModelManager;
import dev.modelkeeper.core.CapacityExceededException;
import dev.modelkeeper.core.EvictionOutcome;
import dev.modelkeeper.core.LoadBackoffException;
import dev.modelkeeper.core.LockTimeoutException;
import dev.modelkeeper.core.ManagerOptions;
import dev.modelkeeper.core.ModelDescription;
import dev.modelkeeper.core.ModelLease;
import dev.modelkeeper.core.ModelLoadException;
import dev.modelkeeper.core.ModelManager;
import dev.modelkeeper.core.ModelManagerDecorator;
import dev.modelkeeper.core.ModelNotFoundException;
import dev.modelkeeper.core.ModelUnloadException;
import dev.modelkeeper.core.RemovalCause;
import dev.modelkeeper.core.Residents;
import dev.modelkeeper.core.WithFixedSizeCache;
import dev.modelkeeper.core.testkit.Async;
import dev.modelkeeper.core.testkit.Evictions;
import dev.modelkeeper.core.testkit.FakeTicker;
import dev.modelkeeper.core.testkit.Gate;
import dev.modelkeeper.core.testkit.QuietLogs;
import dev.modelkeeper.core.testkit.TestModel;
import dev.modelkeeper.core.testkit.TestRegistry;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Edge cases of the base manager that the mutation report showed untested. */
@ExtendWith(QuietLogs.class)
class ManagerEdgeCasesTest {

  private final FakeTicker ticker = FakeTicker.manual();
  private final TestRegistry registry = TestRegistry.of("a", "b");

  private BaseModelManager manager(ManagerOptions.Builder options) {
    return new BaseModelManager(registry, options.ticker(ticker).build());
  }

  @Test
  void evict_eachState_reportsTheMatchingOutcome() {
    BaseModelManager m = manager(ManagerOptions.builder());
    Residents r = Evictions.of(m);
    assertThat(r.evict("a", RemovalCause.COUNT_BUDGET)).isEqualTo(EvictionOutcome.ABSENT);
    m.addModel("a", "key");
    try (ModelLease lease = m.acquire("a", "key")) {
      assertThat(r.evict("a", RemovalCause.COUNT_BUDGET)).isEqualTo(EvictionOutcome.BUSY);
    }
    registry.last("a").failClearWith(new IllegalStateException("stuck"));
    assertThat(r.evict("a", RemovalCause.COUNT_BUDGET)).isEqualTo(EvictionOutcome.FAILED);
    registry.last("a").failClearWith(null);
    assertThat(r.evict("a", RemovalCause.COUNT_BUDGET)).isEqualTo(EvictionOutcome.EVICTED);
    assertThat(m.contains("a")).isFalse();
    assertThat(m.stats().evictions()).containsEntry(RemovalCause.COUNT_BUDGET, 1L);
  }

  @Test
  void acquire_modelInstalledAtConstruction_leasesItWithoutBuilding() {
    TestModel preloaded = TestModel.of("a");
    BaseModelManager m =
        new BaseModelManager(registry, Map.of("a", preloaded), ManagerOptions.defaults());
    try (ModelLease lease = m.acquire("a", "key")) {
      assertThat(lease.model()).isSameAs(preloaded);
    }
    assertThat(registry.constructions()).isZero();
  }

  @Test
  void acquire_afterRemoveWhoseClearCacheThrew_leasesTheSameModel() {
    BaseModelManager m = manager(ManagerOptions.builder());
    m.addModel("a", "key");
    TestModel model = registry.last("a").failClearWith(new IllegalStateException("stuck"));
    assertThatThrownBy(() -> m.remove("a")).isInstanceOf(ModelUnloadException.class);
    try (ModelLease lease = m.acquire("a", "key")) {
      assertThat(lease.model()).isSameAs(model);
    }
    assertThat(registry.constructions("a")).isEqualTo(1);
  }

  @Test
  void load_afterSuccessFollowingAFailure_startsBackoffFromTheInitialWindow() {
    BaseModelManager m =
        manager(
            ManagerOptions.builder().failureBackoff(Duration.ofSeconds(1), Duration.ofSeconds(8)));
    registry.failNextLoads("a", 1);
    assertThatThrownBy(() -> m.addModel("a", "key")).isInstanceOf(ModelLoadException.class);
    ticker.advance(Duration.ofSeconds(1));
    m.addModel("a", "key");
    m.remove("a");
    registry.failNextLoads("a", 1);
    assertThatThrownBy(() -> m.addModel("a", "key")).isInstanceOf(ModelLoadException.class);
    assertThatThrownBy(() -> m.addModel("a", "key"))
        .isInstanceOfSatisfying(
            LoadBackoffException.class,
            e -> assertThat(e.retryAfter()).isEqualTo(Duration.ofSeconds(1)));
  }

  @Test
  void load_repeatedFailures_doubleTheBackoffWindowUpToTheMaximum() {
    BaseModelManager m =
        manager(
            ManagerOptions.builder().failureBackoff(Duration.ofSeconds(1), Duration.ofSeconds(3)));
    registry.failNextLoads("a", 3);
    Duration[] expected = {Duration.ofSeconds(1), Duration.ofSeconds(2), Duration.ofSeconds(3)};
    for (Duration window : expected) {
      assertThatThrownBy(() -> m.addModel("a", "key")).isInstanceOf(ModelLoadException.class);
      assertThatThrownBy(() -> m.addModel("a", "key"))
          .isInstanceOfSatisfying(
              LoadBackoffException.class, e -> assertThat(e.retryAfter()).isEqualTo(window));
      ticker.advance(window);
    }
    m.addModel("a", "key");
    assertThat(m.contains("a")).isTrue();
  }

  @Test
  void load_measuredByTheTicker_reportsItsDurationInStatsAndDescription() {
    BaseModelManager m = manager(ManagerOptions.builder());
    registry.duringLoad(() -> ticker.advance(Duration.ofMillis(5)));
    m.addModel("a", "key");
    assertThat(m.stats().loadNanosTotal()).isEqualTo(Duration.ofMillis(5).toNanos());
    ModelDescription d = m.describeModels().get(0);
    assertThat(d.loadNanos()).isEqualTo(Duration.ofMillis(5).toNanos());
  }

  @Test
  void load_modelReportingZeroBytes_keepsZeroNotThePrediction() {
    registry.size("a", 100).actualSize("a", 0);
    BaseModelManager m = manager(ManagerOptions.builder());
    m.addModel("a", "key");
    assertThat(m.describeModels().get(0).sizeBytes()).isZero();
    assertThat(m.stats().residentBytes()).isZero();
  }

  @Test
  void clear_withTwoFailingClears_reportsOneFailureWithTheOtherSuppressed() {
    BaseModelManager m = manager(ManagerOptions.builder());
    m.addModel("a", "key");
    m.addModel("b", "key");
    registry.last("a").failClearWith(new IllegalStateException("stuck a"));
    registry.last("b").failClearWith(new IllegalStateException("stuck b"));
    assertThatThrownBy(m::clear)
        .isInstanceOfSatisfying(
            ModelUnloadException.class,
            e -> {
              assertThat(e.getMessage()).contains("2 model(s)");
              assertThat(e.getSuppressed()).hasSize(1);
            });
    assertThat(m.keys()).containsExactlyInAnyOrder("a", "b");
  }

  @Test
  void addModel_waiterTimesOut_messageNamesHolderAndWaiters() throws Exception {
    BaseModelManager m = manager(ManagerOptions.builder().lifecycleTimeout(Duration.ofMillis(50)));
    Gate constructing = new Gate();
    registry.pauseNextLoad("a", constructing);
    Async<Void> holder = Async.run("holder", () -> m.addModel("a", "key"));
    constructing.awaitEntered();
    try {
      assertThatThrownBy(() -> m.addModel("a", "key"))
          .isInstanceOf(LockTimeoutException.class)
          .hasMessageContaining("holder: load")
          .hasMessageContaining("waiters: 1")
          .hasMessageContaining("leases: 0");
    } finally {
      constructing.open();
    }
    holder.join();
    assertThat(m.contains("a")).isTrue();
  }

  @Test
  void load_unknownId_opensNoBackoffWindow() {
    BaseModelManager m = manager(ManagerOptions.builder());
    for (int i = 0; i < 2; i++) {
      assertThatThrownBy(() -> m.addModel("ghost", "key"))
          .isInstanceOf(ModelNotFoundException.class);
    }
    assertThat(registry.lookups()).containsExactly("ghost", "ghost");
    assertThat(m.lifecycleTable()).isEmpty();
  }

  @Test
  void load_refusedForCapacity_opensNoBackoffWindow() {
    BaseModelManager m = manager(ManagerOptions.builder());
    WithFixedSizeCache cache = new WithFixedSizeCache(m, 1);
    cache.addModel("a", "key");
    cache.pin("a");
    assertThatThrownBy(() -> cache.addModel("b", "key"))
        .isInstanceOf(CapacityExceededException.class);
    cache.unpin("a");
    cache.addModel("b", "key");
    assertThat(cache.keys()).containsExactly("b");
  }

  @Test
  void load_withBackoffOff_retriesAtOnce() {
    BaseModelManager m =
        manager(ManagerOptions.builder().failureBackoff(Duration.ZERO, Duration.ZERO));
    registry.failNextLoads("a", 1);
    assertThatThrownBy(() -> m.addModel("a", "key")).isInstanceOf(ModelLoadException.class);
    m.addModel("a", "key");
    assertThat(registry.constructions("a")).isEqualTo(2);
  }

  @Test
  void detectLeaks_leaseHeldPastThreshold_reportedOnceAndClosedOnesNever() {
    BaseModelManager m = manager(ManagerOptions.builder().leakThreshold(Duration.ofHours(1)));
    m.acquire("b", "key").close();
    ModelLease held = m.acquire("a", "key");
    assertThat(m.detectLeaks()).isEmpty();
    ticker.advance(Duration.ofHours(2));
    assertThat(m.detectLeaks()).containsExactly("a");
    assertThat(m.detectLeaks()).isEmpty();
    held.close();
    assertThat(held.toString()).contains("closed");
    assertThat(held.modelId()).isEqualTo("a");
    assertThat(m.stats().activeLeases()).isZero();
  }

  @Test
  void acquireAsync_throughADecorator_coldAndWarm_leaseTheSameModel() throws Exception {
    BaseModelManager m = manager(ManagerOptions.builder().executor(Runnable::run));
    ModelManager top = new ModelManagerDecorator(m) {};
    try (ModelLease cold = top.acquireAsync("a", "key").get(10, TimeUnit.SECONDS)) {
      try (ModelLease warm = top.acquireAsync("a", "key", null).get(10, TimeUnit.SECONDS)) {
        assertThat(warm.model()).isSameAs(cold.model());
      }
    }
    assertThat(registry.constructions("a")).isEqualTo(1);
    assertThat(m.stats().activeLeases()).isZero();
  }

  @Test
  void acquire_thatWaitedForALoad_countsALeaseWait() throws Exception {
    BaseModelManager m = manager(ManagerOptions.builder());
    Gate constructing = new Gate();
    registry.pauseNextLoad("a", constructing);
    Async<Void> holder = Async.run("holder", () -> m.addModel("a", "key"));
    constructing.awaitEntered();
    Async<Boolean> waiter =
        Async.call(
            "waiter",
            () -> {
              try (ModelLease lease = m.acquire("a", "key")) {
                return lease.model() != null;
              }
            });
    waiter.awaitBlockedOrDone(); // it waits for the load
    assertThat(waiter.isDone()).as("the waiter returned before the load finished").isFalse();
    constructing.open();
    holder.join();
    assertThat(waiter.join()).isTrue();
    assertThat(m.stats().leaseWaits()).isEqualTo(1);
  }
}
