package dev.modelkeeper.core.verification;

import static org.assertj.core.api.Assertions.assertThat;

import dev.modelkeeper.core.BaseModelManager;
import dev.modelkeeper.core.CacheOptions;
import dev.modelkeeper.core.CapacityExceededException;
import dev.modelkeeper.core.ManagerOptions;
import dev.modelkeeper.core.ModelLease;
import dev.modelkeeper.core.StepBackException;
import dev.modelkeeper.core.WithFixedSizeCache;
import dev.modelkeeper.core.testkit.Invariants;
import dev.modelkeeper.core.testkit.LogCapture;
import dev.modelkeeper.core.testkit.TestRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAccumulator;
import java.util.concurrent.atomic.LongAdder;
import java.util.logging.Level;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Randomized stress of runs that need working memory in a tight budget: eight models of 30 bytes, a
 * budget of 100 (three models, or two models and a run, or one model and two runs), and six threads
 * that each make {@link #REQUESTS} requests of random models the way a model's executor does: lease
 * the model (loading it, evicting others), reserve 25 bytes of working memory or step back (close
 * the lease, wait for room, try again), compute, close. Every request must finish or be refused as
 * over capacity, and no single wait may come near the capacity timeout of 10 s: the longest must
 * stay under two seconds, where a wait cycle would last the whole timeout. Afterwards nothing is
 * left waiting or reserved and every invariant holds.
 *
 * <p>Randomness is seeded ({@code -Dmodelkeeper.stress.seed}); the seed is printed at the start and
 * in every failure.
 */
@Tag("stress")
class WaitCycleStressTest {

  static final long SEED = Long.getLong("modelkeeper.stress.seed", System.nanoTime());
  static final int THREADS = 6;
  static final int REQUESTS = 2_000;
  static final int MODELS = 8;
  static final Duration MAX_WAIT = Duration.ofSeconds(2);

  @Test
  @Timeout(value = 5, unit = TimeUnit.MINUTES)
  void manyRunsInATightBudget_allFinishOrAreRefused_andNoWaitComesNearTheTimeout()
      throws Exception {
    System.out.println("[stress] wait cycles, seed " + SEED);
    TestRegistry registry = TestRegistry.of();
    for (int i = 0; i < MODELS; i++) {
      registry.add("m" + i).size("m" + i, 30);
    }
    BaseModelManager base =
        new BaseModelManager(
            registry, ManagerOptions.builder().lifecycleTimeout(Duration.ofSeconds(60)).build());
    WithFixedSizeCache budget =
        new WithFixedSizeCache(
            base,
            CacheOptions.builder(MODELS)
                .maxBytes(100)
                .capacityTimeout(Duration.ofSeconds(10))
                .build());
    LongAccumulator longestWait = new LongAccumulator(Math::max, 0);
    LongAdder finished = new LongAdder();
    LongAdder refused = new LongAdder();
    LongAdder stepsBack = new LongAdder();
    ExecutorService pool = Executors.newFixedThreadPool(THREADS);
    try (LogCapture log = LogCapture.of(WithFixedSizeCache.class)) {
      List<Future<?>> workers = new ArrayList<>();
      for (int t = 0; t < THREADS; t++) {
        SplittableRandom random = new SplittableRandom(SEED + t);
        workers.add(
            pool.submit(
                () -> {
                  for (int r = 0; r < REQUESTS; r++) {
                    String id = "m" + random.nextInt(MODELS);
                    int work = random.nextInt(200);
                    if (request(budget, id, work, longestWait, stepsBack)) {
                      finished.increment();
                    } else {
                      refused.increment();
                    }
                  }
                  return null;
                }));
      }
      for (Future<?> worker : workers) {
        worker.get(3, TimeUnit.MINUTES);
      }
      System.out.printf(
          "[stress] wait cycles: %d finished, %d refused, %d stepped back, longest wait %d ms%n",
          finished.sum(), refused.sum(), stepsBack.sum(), longestWait.get() / 1_000_000);
      assertThat(finished.sum() + refused.sum())
          .as("seed %d: every request ended", SEED)
          .isEqualTo((long) THREADS * REQUESTS);
      assertThat(Duration.ofNanos(longestWait.get()))
          .as("seed %d: the longest single wait for room", SEED)
          .isLessThan(MAX_WAIT);
      assertThat(log.messages(Level.WARNING)).as("seed %d: stalls logged", SEED).isEmpty();
    } finally {
      pool.shutdownNow();
      assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
    }
    assertThat(budget.waits()).isEmpty();
    assertThat(budget.workingBytes()).isZero();
    assertThat(Invariants.checkQuiescent(budget, base, budget, registry, true))
        .as("seed %d", SEED)
        .isEmpty();
  }

  /** One request as a model's executor makes it; false when refused as over capacity. */
  private static boolean request(
      WithFixedSizeCache budget,
      String id,
      int work,
      LongAccumulator longestWait,
      LongAdder stepsBack) {
    while (true) {
      long start = System.nanoTime();
      try (ModelLease lease = budget.acquire(id, "key")) {
        longestWait.accumulate(System.nanoTime() - start); // the load's wait for room, if any
        start = System.nanoTime();
        try (WithFixedSizeCache.Reservation working =
            budget.reserveWorkingOrStepBack(lease.modelId(), 25)) {
          longestWait.accumulate(System.nanoTime() - start);
          for (int i = 0; i < work; i++) {
            Thread.onSpinWait(); // the run's compute
          }
          return true;
        }
      } catch (StepBackException back) {
        longestWait.accumulate(System.nanoTime() - start);
        stepsBack.increment();
        long waitStart = System.nanoTime();
        try {
          back.awaitRoom();
        } catch (CapacityExceededException e) {
          return false;
        } finally {
          longestWait.accumulate(System.nanoTime() - waitStart);
        }
      } catch (CapacityExceededException e) {
        longestWait.accumulate(System.nanoTime() - start);
        return false;
      }
    }
  }
}
