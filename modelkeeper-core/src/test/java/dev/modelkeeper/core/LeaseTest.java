package dev.modelkeeper.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.modelkeeper.core.testkit.Async;
import dev.modelkeeper.core.testkit.FakeTicker;
import dev.modelkeeper.core.testkit.Gate;
import dev.modelkeeper.core.testkit.Invariants;
import dev.modelkeeper.core.testkit.TestRegistry;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Leases: removal drains them, back-off after failures, leak reports, the async form. */
class LeaseTest {

  private final TestRegistry registry = TestRegistry.of("a", "b");
  private final FakeTicker ticker = FakeTicker.manual();

  private BaseModelManager manager(Duration drainTimeout) {
    return new BaseModelManager(
        registry,
        ManagerOptions.builder()
            .ticker(ticker)
            .drainTimeout(drainTimeout)
            .lifecycleTimeout(Duration.ofSeconds(10))
            .leakThreshold(Duration.ofSeconds(5))
            .build());
  }

  @Test
  void remove_withOpenLease_waitsForItThenClears() throws Exception {
    BaseModelManager manager = manager(Duration.ofSeconds(10));
    ModelLease lease = manager.acquire("a", "k");
    Async<Void> remover = Async.run("remove", () -> manager.remove("a"));
    await()
        .until(
            () ->
                manager.describeModels().stream().anyMatch(d -> d.state() == ModelState.DRAINING));

    assertThat(registry.last("a").clears()).isZero();
    assertThat(remover.isDone()).isFalse();
    lease.close();
    remover.join();

    assertThat(registry.last("a").clears()).isEqualTo(1);
    assertThat(manager.contains("a")).isFalse();
    assertThat(Invariants.check(manager, manager, null, registry)).isEmpty();
  }

  @Test
  void acquire_whileDraining_waitsAndGetsAFreshModel() throws Exception {
    BaseModelManager manager = manager(Duration.ofSeconds(10));
    ModelLease lease = manager.acquire("a", "k");
    Async<Void> remover = Async.run("remove", () -> manager.remove("a"));
    await().until(() -> manager.describeModels().get(0).state() == ModelState.DRAINING);
    Async<ModelLease> late = Async.call("late-acquire", () -> manager.acquire("a", "k"));
    await().until(() -> manager.reservations("a") == 2);

    assertThat(late.isDone()).isFalse();
    lease.close();
    remover.join();
    try (ModelLease fresh = late.join()) {
      assertThat(fresh.model()).isNotSameAs(lease.model());
      assertThat(registry.constructions("a")).isEqualTo(2);
    }
  }

  @Test
  void remove_drainTimeout_leavesModelRegisteredAndLeasable() {
    BaseModelManager manager = manager(Duration.ofMillis(100));
    try (ModelLease lease = manager.acquire("a", "k")) {
      assertThatThrownBy(() -> manager.remove("a"))
          .isInstanceOf(LeaseDrainTimeoutException.class)
          .hasMessageContaining("'a'")
          .hasMessageContaining("1 open lease(s)");

      assertThat(manager.contains("a")).isTrue();
      try (ModelLease again = manager.acquire("a", "k")) {
        assertThat(again.model()).isSameAs(lease.model());
      }
    }
    assertThat(registry.last("a").clears()).isZero();
    manager.remove("a");
    assertThat(Invariants.check(manager, manager, null, registry)).isEmpty();
  }

  @Test
  void failedLoad_notRetriedWithinBackoffWindow_retriedAfterIt() {
    BaseModelManager manager =
        new BaseModelManager(
            registry,
            ManagerOptions.builder()
                .ticker(ticker)
                .failureBackoff(Duration.ofSeconds(1), Duration.ofSeconds(8))
                .build());
    registry.failNextLoads("a", 2);

    assertThatThrownBy(() -> manager.acquire("a", "k")).isInstanceOf(ModelLoadException.class);
    assertThatThrownBy(() -> manager.addModel("a", "k"))
        .isInstanceOfSatisfying(
            LoadBackoffException.class,
            e -> assertThat(e.retryAfter()).isEqualTo(Duration.ofSeconds(1)))
        .hasMessageContaining("failed 1 time(s)");
    assertThat(registry.constructions("a")).isEqualTo(1);

    ticker.advance(Duration.ofSeconds(1));
    assertThatThrownBy(() -> manager.addModel("a", "k"))
        .isNotInstanceOf(LoadBackoffException.class);
    assertThat(registry.constructions("a")).isEqualTo(2);

    ticker.advance(Duration.ofMillis(1999)); // the second window is twice as long
    assertThatThrownBy(() -> manager.addModel("a", "k")).isInstanceOf(LoadBackoffException.class);
    ticker.advance(Duration.ofMillis(1));
    manager.addModel("a", "k");
    assertThat(registry.constructions("a")).isEqualTo(3);
    assertThat(manager.stats().loadFailures()).isEqualTo(2);
    assertThat(manager.lifecycleTable()).containsExactly("a");
  }

  @Test
  void leakDetection_reportsAnUnclosedLeaseOnce() {
    BaseModelManager manager = manager(Duration.ofSeconds(1));
    ModelLease closed = manager.acquire("b", "k");
    closed.close();
    ModelLease leaked = manager.acquire("a", "k");

    ticker.advance(Duration.ofSeconds(4));
    assertThat(manager.detectLeaks()).isEmpty();
    ticker.advance(Duration.ofSeconds(1));
    assertThat(manager.detectLeaks()).containsExactly("a");
    ticker.advance(Duration.ofSeconds(10));
    assertThat(manager.detectLeaks()).isEmpty();
    leaked.close();
  }

  @Test
  void acquireAsync_residentModel_completesAtOnce() throws Exception {
    BaseModelManager manager = manager(Duration.ofSeconds(1));
    manager.addModel("a", "k");

    CompletableFuture<ModelLease> f = manager.acquireAsync("a", "k");

    assertThat(f).isDone();
    f.join().close();
  }

  @Test
  void acquireAsync_coldModel_doesNotBlockTheCaller() throws Exception {
    BaseModelManager manager = manager(Duration.ofSeconds(1));
    Gate loading = new Gate();
    registry.pauseNextLoad("a", loading);

    CompletableFuture<ModelLease> f = manager.acquireAsync("a", "k");
    loading.awaitEntered(); // the constructor runs, and this thread is free

    assertThat(f).isNotDone();
    loading.open();
    try (ModelLease lease = f.get(10, TimeUnit.SECONDS)) {
      assertThat(lease.model()).isSameAs(registry.last("a"));
    }
  }

  @Test
  void acquireAsync_unknownModel_completesExceptionally() {
    BaseModelManager manager = manager(Duration.ofSeconds(1));

    assertThat(manager.acquireAsync("nope", "k"))
        .failsWithin(Duration.ofSeconds(10))
        .withThrowableThat()
        .havingCause()
        .isInstanceOf(ModelNotFoundException.class);
  }

  @Test
  void stats_countLoadsRemovalsAndLeases() {
    BaseModelManager manager = manager(Duration.ofSeconds(1));
    ModelLease lease = manager.acquire("a", "k");
    manager.addModel("b", "k");
    manager.remove("b");

    ManagerStats stats = manager.stats();
    assertThat(stats.loads()).isEqualTo(2);
    assertThat(stats.removals()).isEqualTo(1);
    assertThat(stats.activeLeases()).isEqualTo(1);
    assertThat(stats.residentModels()).isEqualTo(1);
    lease.close();
    assertThat(manager.stats().activeLeases()).isZero();
  }
}
