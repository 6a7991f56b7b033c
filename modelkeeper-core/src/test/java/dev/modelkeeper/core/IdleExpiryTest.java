package dev.modelkeeper.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.modelkeeper.core.testkit.FakeTicker;
import dev.modelkeeper.core.testkit.Invariants;
import dev.modelkeeper.core.testkit.TestRegistry;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Time-to-idle eviction of {@link WithFixedSizeCache}, on a fake clock and a captured schedule. */
class IdleExpiryTest {

  private static final Duration IDLE = Duration.ofSeconds(300);
  private static final Duration NANO = Duration.ofNanos(1);

  private final FakeTicker ticker = FakeTicker.manual();
  private final TestRegistry registry = TestRegistry.of("a", "b", "c");
  private final BaseModelManager base =
      new BaseModelManager(registry, ManagerOptions.builder().ticker(ticker).build());
  private final CapturingScheduler scheduler = new CapturingScheduler();
  private final WithFixedSizeCache cache =
      new WithFixedSizeCache(
          base, CacheOptions.builder(8).expireAfterIdle(IDLE).scheduler(scheduler).build());

  @AfterEach
  void invariantsHold() {
    scheduler.shutdownNow();
    assertThat(Invariants.check(cache, base, cache, registry)).isEmpty();
  }

  @Test
  void expireIdle_idleForTheTimeout_evictsExactlyThen() {
    cache.addModel("a", null);
    ticker.advance(IDLE.minus(NANO));
    assertThat(cache.expireIdle()).isZero();
    assertThat(cache.keys()).containsExactly("a");

    ticker.advance(NANO);
    assertThat(cache.expireIdle()).isEqualTo(1);
    assertThat(cache.keys()).isEmpty();
    assertThat(registry.last("a").clears()).isEqualTo(1);
    assertThat(cache.stats().evictions()).containsEntry(RemovalCause.IDLE, 1L);
  }

  @Test
  void expireIdle_aUseRestartsTheIdleTime_andOnlyIdleModelsGo() {
    cache.addModel("a", null);
    cache.addModel("b", null);
    ticker.advance(IDLE.minus(Duration.ofSeconds(1)));
    cache.acquire("a", null).close();
    ticker.advance(Duration.ofSeconds(1));

    assertThat(cache.expireIdle()).isEqualTo(1);
    assertThat(cache.keys()).containsExactly("a");
    // the use of a was recorded in the read buffer and counted when this sweep drained it (the
    // sweeps run every tenth of the timeout, so at most that much later than the use itself)
    ticker.advance(IDLE.minus(NANO));
    assertThat(cache.expireIdle()).isZero();
    ticker.advance(NANO);
    assertThat(cache.expireIdle()).isEqualTo(1);
    assertThat(cache.keys()).isEmpty();
  }

  @Test
  void expireIdle_leasedModel_neverExpires_andIdlesFromWhenSeenLeased() {
    cache.addModel("a", null);
    ModelLease lease = cache.acquire("a", null);
    assertThat(cache.lruOrder()).containsExactly("a"); // the lease's read is counted now
    ticker.advance(IDLE.multipliedBy(10));
    assertThat(cache.expireIdle()).isZero();
    assertThat(cache.keys()).containsExactly("a");
    lease.close();

    ticker.advance(IDLE.minus(NANO));
    assertThat(cache.expireIdle())
        .as("idle time counts from the sweep that saw it leased")
        .isZero();
    ticker.advance(NANO);
    assertThat(cache.expireIdle()).isEqualTo(1);
    assertThat(cache.keys()).isEmpty();
  }

  @Test
  void expireIdle_pinnedModel_neverExpires_untilUnpinned() {
    cache.pin("a");
    cache.addModel("a", null);
    ticker.advance(IDLE.multipliedBy(10));
    assertThat(cache.expireIdle()).isZero();
    assertThat(cache.keys()).containsExactly("a");

    cache.unpin("a");
    assertThat(cache.expireIdle()).isEqualTo(1);
    assertThat(cache.keys()).isEmpty();
  }

  @Test
  void expireIdle_leaseTakenAtTheBoundary_keepsTheModelForAnotherTimeout() {
    cache.addModel("a", null);
    ticker.advance(IDLE);
    try (ModelLease lease = cache.acquire("a", null)) {
      assertThat(cache.expireIdle()).isZero();
      assertThat(lease.model()).isSameAs(cache.get("a"));
    }
    assertThat(cache.expireIdle()).as("closed at the boundary: used now").isZero();
    ticker.advance(IDLE.minus(NANO));
    assertThat(cache.expireIdle()).isZero();
    ticker.advance(NANO);
    assertThat(cache.expireIdle()).isEqualTo(1);
    assertThat(registry.constructions("a")).isEqualTo(1);
  }

  @Test
  void expireIdle_leaseClosedAtTheBoundaryBeforeTheSweep_countsAsAUse() {
    cache.addModel("a", null);
    ticker.advance(IDLE);
    cache.acquire("a", null).close();
    assertThat(cache.expireIdle()).isZero();
    assertThat(cache.keys()).containsExactly("a");
  }

  @Test
  void sweep_isScheduledEveryTenthOfTheTimeout_andEvictsIdleModels() {
    assertThat(scheduler.periodNanos.get()).isEqualTo(IDLE.toNanos() / 10);
    cache.addModel("a", null);
    ticker.advance(IDLE);
    scheduler.task.get().run();
    assertThat(cache.keys()).isEmpty();
  }

  @Test
  void expireIdle_withoutTimeout_isANoOp() {
    cache.addModel("c", null);
    WithFixedSizeCache plain = new WithFixedSizeCache(base, 8);
    ticker.advance(IDLE.multipliedBy(2));
    assertThat(plain.expireIdle()).isZero();
    assertThat(plain.keys()).containsExactly("c");
    assertThat(plain.options().expireAfterIdle()).isZero();
  }

  @Test
  void expireAfterIdle_negative_isRefusedNamingTheSetting() {
    assertThatThrownBy(() -> CacheOptions.builder(1).expireAfterIdle(Duration.ofSeconds(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("expireAfterIdle");
  }

  /** Records the periodic task instead of running it. */
  private static final class CapturingScheduler extends ScheduledThreadPoolExecutor {
    final AtomicReference<Runnable> task = new AtomicReference<>();
    final AtomicReference<Long> periodNanos = new AtomicReference<>();

    CapturingScheduler() {
      super(1);
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(
        Runnable command, long initialDelay, long period, TimeUnit unit) {
      task.set(command);
      periodNanos.set(unit.toNanos(period));
      return super.schedule(() -> {}, 1, TimeUnit.DAYS);
    }
  }
}
