package dev.modelkeeper.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.modelkeeper.core.testkit.Async;
import dev.modelkeeper.core.testkit.FakeTicker;
import dev.modelkeeper.core.testkit.Gate;
import dev.modelkeeper.core.testkit.Invariants;
import dev.modelkeeper.core.testkit.LogCapture;
import dev.modelkeeper.core.testkit.TestRegistry;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.logging.Level;
import org.junit.jupiter.api.Test;

/**
 * The byte budget holds more than models: the working memory of runs ({@link
 * WithFixedSizeCache#reserveWorking}) and memory outside the models ({@link
 * WithFixedSizeCache#setOutsideBytes}), both making room by evicting idle models.
 */
class WorkingMemoryTest {

  private final TestRegistry registry =
      TestRegistry.of("a", "b", "c").size("a", 40).size("b", 40).size("c", 40);
  private final BaseModelManager base =
      new BaseModelManager(
          registry,
          ManagerOptions.builder()
              .ticker(FakeTicker.autoAdvancing())
              .lifecycleTimeout(Duration.ofSeconds(10))
              .build());

  private WithFixedSizeCache cache(long maxBytes, Duration capacityTimeout) {
    return new WithFixedSizeCache(
        base, CacheOptions.builder(8).maxBytes(maxBytes).capacityTimeout(capacityTimeout).build());
  }

  @Test
  void reserveWorking_whenIdleModelsFillTheBudget_evictsTheLeastRecentlyUsed() {
    WithFixedSizeCache cache = cache(100, Duration.ofSeconds(5));
    cache.addModel("a", "k");
    cache.addModel("b", "k");

    try (ModelLease lease = cache.acquire("b", "k");
        WithFixedSizeCache.Reservation run = cache.reserveWorking("b", 30)) {
      assertThat(cache.keys()).containsExactly("b");
      assertThat(cache.workingBytes()).isEqualTo(30);
      assertThat(cache.stats().evictions()).containsEntry(RemovalCause.BYTE_BUDGET, 1L);
    }
    assertThat(cache.workingBytes()).isZero();
    assertThat(Invariants.check(cache, base, cache, registry)).isEmpty();
  }

  @Test
  void tryReserveWorking_whenIdleModelsFillTheBudget_evictsNothingAndReservesNothing() {
    WithFixedSizeCache cache = cache(100, Duration.ofSeconds(5));
    cache.addModel("a", "k");
    cache.addModel("b", "k");

    assertThat(cache.tryReserveWorking("b", 30)).isEmpty();

    assertThat(cache.keys()).containsExactlyInAnyOrder("a", "b");
    assertThat(cache.workingBytes()).isZero();
    assertThat(cache.stats().evictions()).containsEntry(RemovalCause.BYTE_BUDGET, 0L);
    try (WithFixedSizeCache.Reservation fits = cache.tryReserveWorking("b", 20).orElseThrow()) {
      assertThat(cache.workingBytes()).isEqualTo(20);
    }
    assertThat(cache.workingBytes()).isZero();
    assertThat(Invariants.check(cache, base, cache, registry)).isEmpty();
  }

  @Test
  void reserveWorking_whileOtherRunsHoldTheRoom_waitsUntilOneEnds() throws Exception {
    WithFixedSizeCache cache = cache(100, Duration.ofSeconds(30));
    cache.addModel("a", "k");
    ModelLease lease = cache.acquire("a", "k");
    WithFixedSizeCache.Reservation first = cache.reserveWorking("a", 50);

    Async<WithFixedSizeCache.Reservation> second =
        Async.call("second run", () -> cache.reserveWorking("a", 50));
    second.awaitBlockedOrDone();
    assertThat(second.isDone()).as("the second run waits for room").isFalse();

    first.close();
    first.close(); // idempotent: returns its bytes once
    try (WithFixedSizeCache.Reservation r = second.join()) {
      assertThat(cache.workingBytes()).isEqualTo(50);
    }
    lease.close();
    assertThat(cache.workingBytes()).isZero();
  }

  @Test
  void reserveWorking_whenNothingFreesRoomBeforeTheDeadline_throwsCapacityExceeded()
      throws Exception {
    WithFixedSizeCache cache = cache(100, Duration.ofMillis(200));
    cache.addModel("a", "k");
    cache.addModel("b", "k");
    try (ModelLease a = cache.acquire("a", "k");
        ModelLease b = cache.acquire("b", "k")) {
      // both models are in use: a run needing more than the 20 bytes left cannot get room; it
      // waits for the capacity timeout because the other run's lease may end, then gives up
      WithFixedSizeCache.Reservation other = cache.reserveWorking("a", 10);
      assertThatThrownBy(() -> cache.reserveWorking("b", 15))
          .isExactlyInstanceOf(CapacityExceededException.class)
          .hasMessageContaining("no working memory to run 'b'")
          .hasMessageContaining("bytes 80 + 10 working/100");
      other.close();
    }
    assertThat(cache.keys()).containsExactlyInAnyOrder("a", "b");
    assertThat(cache.workingBytes()).isZero();
  }

  @Test
  void reserveWorking_largerThanTheWholeBudget_isTooLarge() {
    WithFixedSizeCache cache = cache(100, Duration.ofSeconds(5));

    assertThatThrownBy(() -> cache.reserveWorking("a", 101))
        .isInstanceOf(ModelTooLargeException.class)
        .hasMessageContaining("cannot run 'a'");
  }

  @Test
  void reserveWorking_thatCanNeverFitBesideItsOwnModel_isTooLargeNotAWait() {
    // regression: a resident model of 40 whose run needs 70 was answered "no room" (retry) forever
    WithFixedSizeCache cache = cache(100, Duration.ofSeconds(5));
    cache.addModel("a", "k");
    try (ModelLease lease = cache.acquire("a", "k")) {
      assertThatThrownBy(() -> cache.reserveWorking("a", 70))
          .isInstanceOf(ModelTooLargeException.class)
          .hasMessageContaining("cannot run 'a'")
          .hasMessageContaining("(40 bytes) loaded and")
          .hasMessageContaining("whole byte budget of 0.0 MiB (100 bytes)");
      try (WithFixedSizeCache.Reservation fits = cache.reserveWorking("a", 60)) {
        assertThat(cache.workingBytes()).isEqualTo(60);
      }
    }
  }

  @Test
  void reserveWorking_withoutAByteBudget_reservesNothing() {
    WithFixedSizeCache cache = cache(0, Duration.ofSeconds(5));

    assertThat(cache.reserveWorking("a", 1L << 40)).isSameAs(WithFixedSizeCache.Reservation.NONE);
    assertThat(cache.workingBytes()).isZero();
  }

  @Test
  void setOutsideBytes_thatLeavesModelsOverBudget_evictsIdleOnes_andLoadsFitTheRest() {
    WithFixedSizeCache cache = cache(100, Duration.ZERO);
    cache.addModel("a", "k");
    cache.addModel("b", "k");

    cache.setOutsideBytes(30);

    assertThat(cache.keys()).containsExactly("b");
    assertThat(cache.outsideBytes()).isEqualTo(30);
    cache.addModel("c", "k"); // 40 + 40 + 30 > 100: b goes
    assertThat(cache.keys()).containsExactly("c");
    cache.setOutsideBytes(0);
    cache.addModel("a", "k");
    assertThat(cache.keys()).containsExactlyInAnyOrder("a", "c");
    assertThat(Invariants.check(cache, base, cache, registry)).isEmpty();
  }

  @Test
  void aModelLargerThanPredicted_isRechargedOnLoad_andIdleModelsMakeRoom() {
    registry.actualSize("c", 70);
    WithFixedSizeCache cache = cache(100, Duration.ofSeconds(5));
    cache.addModel("a", "k");
    cache.addModel("b", "k");

    cache.addModel("c", "k"); // predicted 40: a goes; then it keeps 70: b goes too

    assertThat(cache.keys()).containsExactly("c");
    assertThat(cache.usedBytes()).isEqualTo(70);
    assertThat(Invariants.check(cache, base, cache, registry)).isEmpty();
  }

  @Test
  void aSecondRunThatWouldWaitHoldingItsLease_stepsBack_andTheFirstRunsOnceItsLeaseCloses()
      throws Exception {
    WithFixedSizeCache cache = cache(100, Duration.ofSeconds(30));
    cache.addModel("a", "k");
    cache.addModel("b", "k");
    ModelLease leaseOfB = cache.acquire("b", "k");
    Async<Set<String>> runOfA =
        Async.call(
            "run of a",
            () -> {
              try (ModelLease lease = cache.acquire("a", "k");
                  WithFixedSizeCache.Reservation run = cache.reserveWorkingOrStepBack("a", 30)) {
                return cache.keys();
              }
            });
    awaitWaits(cache, 1);
    assertThat(cache.waits())
        .singleElement()
        .satisfies(
            w -> {
              assertThat(w.what()).isEqualTo("a run of 'a'");
              assertThat(w.bytes()).isEqualTo(30);
              assertThat(w.holdsLease()).isTrue();
            });

    StepBackException back = null;
    try {
      cache.reserveWorkingOrStepBack("b", 30).close();
    } catch (StepBackException e) {
      back = e;
    }
    assertThat(back).as("the second run steps back instead of waiting").isNotNull();
    assertThat(back.modelId()).isEqualTo("b");
    assertThat(back).hasMessageContaining("another run waits for room holding its lease");
    leaseOfB.close();

    assertThat(runOfA.join()).containsExactly("a"); // b went to make room for the run
    back.awaitRoom(TimeUnit.SECONDS.toNanos(5)); // returns at once: nobody waits any longer
    assertThat(cache.waits()).isEmpty();
    assertThat(cache.workingBytes()).isZero();
    assertThat(Invariants.check(cache, base, cache, registry)).isEmpty();
  }

  @Test
  void aRunThatWaitsPastASecond_logsOneLineNamingWhatHoldsTheRoom() throws Exception {
    WithFixedSizeCache cache = cache(100, Duration.ofSeconds(30));
    cache.addModel("a", "k");
    cache.addModel("b", "k");
    try (LogCapture log = LogCapture.of(WithFixedSizeCache.class)) {
      ModelLease leaseOfB = cache.acquire("b", "k");
      Async<Void> runOfA =
          Async.run(
              "run of a",
              () -> {
                try (ModelLease lease = cache.acquire("a", "k");
                    WithFixedSizeCache.Reservation run = cache.reserveWorking("a", 30)) {
                  assertThat(lease.modelId()).isEqualTo("a");
                }
              });
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(Gate.TIMEOUT_SECONDS);
      while (log.messages(Level.WARNING).isEmpty() && System.nanoTime() < deadline) {
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5)); // polling a condition
      }
      leaseOfB.close();
      runOfA.join();

      assertThat(log.messages(Level.WARNING))
          .singleElement()
          .satisfies(
              line -> {
                assertThat(line).startsWith("a run of 'a' has waited ");
                assertThat(line).contains("of working memory, holding its lease; held by: ");
                assertThat(line).contains("leases of [b]");
                assertThat(line).doesNotContain("\n");
              });
      assertThat(log.entries()).allSatisfy(e -> assertThat(e.thrown()).isNull());
    }
    assertThat(cache.waits()).isEmpty();
  }

  private static void awaitWaits(WithFixedSizeCache cache, int n) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(Gate.TIMEOUT_SECONDS);
    while (cache.waits().size() < n) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("fewer than " + n + " waits: " + cache.waits());
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1)); // polling a condition
    }
  }
}
