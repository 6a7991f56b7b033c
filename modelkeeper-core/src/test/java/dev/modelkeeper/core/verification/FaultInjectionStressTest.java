package dev.modelkeeper.core.verification;

import static org.assertj.core.api.Assertions.assertThat;

import dev.modelkeeper.core.BaseModelManager;
import dev.modelkeeper.core.CacheOptions;
import dev.modelkeeper.core.LeaseDrainTimeoutException;
import dev.modelkeeper.core.ManagerOptions;
import dev.modelkeeper.core.ModelKeeperException;
import dev.modelkeeper.core.ModelLease;
import dev.modelkeeper.core.ModelManager;
import dev.modelkeeper.core.ModelManagerDecorator;
import dev.modelkeeper.core.RemovalCause;
import dev.modelkeeper.core.Residents;
import dev.modelkeeper.core.WithFixedSizeCache;
import dev.modelkeeper.core.testkit.Evictions;
import dev.modelkeeper.core.testkit.Invariants;
import dev.modelkeeper.core.testkit.TestModel;
import dev.modelkeeper.core.testkit.TestRegistry;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Fault-injection stress: many threads run random operations against a manager stack while
 * constructors and {@code clearCache()} fail, stall past the lifecycle timeouts or take random
 * time, and a chaos thread interrupts the workers. After each round every thread is joined and the
 * full invariant checker runs; then faults stop, {@code clear()} must empty everything and the
 * checker runs again.
 *
 * <p>Runs for {@code -Dmodelkeeper.stress.seconds} (default 24) in rounds of three seconds that
 * cycle through the stack variants. Randomness is seeded ({@code -Dmodelkeeper.stress.seed}); the
 * seed is printed at the start and in every failure. Thread scheduling still varies between runs,
 * so a seed reproduces the operation and fault sequences of each thread, not the interleaving.
 */
@Tag("stress")
class FaultInjectionStressTest {

  static final long SECONDS = Long.getLong("modelkeeper.stress.seconds", 24);
  static final long SEED = Long.getLong("modelkeeper.stress.seed", System.nanoTime());
  static final int WORKERS = Integer.getInteger("modelkeeper.stress.threads", 8);
  static final long ROUND_MILLIS = 3_000;
  static final long JOIN_SECONDS = 30;

  /** (requested model ID, alias) pairs; aliases resolve to identifiers of their own. */
  static final String[][] KEYS = {
    {"m0", null},
    {"m1", null},
    {"m2", null},
    {"m3", null},
    {"m4", null},
    {"m5", null},
    {"m0", "m0@canary"},
    {"m3", "m3@canary"}
  };

  /** The stacks a round runs against, in turn. */
  enum Variant {
    /** base, a count budget of three, a transparent decorator on top. */
    COUNT_BUDGET,
    /** base and a budget of four models and 250 bytes (models take 100 or 120 bytes). */
    BYTE_BUDGET,
    /** base alone, with leak detection on: contention without eviction. */
    NO_BUDGET,
    /**
     * base alone with a drain timeout of {@link #LIVENESS_DRAIN}: leases are held for at most a few
     * milliseconds, so a removal that waits that long waits for nobody (a lost idle report).
     */
    LIVENESS
  }

  static final Duration LIVENESS_DRAIN = Duration.ofSeconds(5);

  @Test
  @Timeout(value = 60, unit = TimeUnit.MINUTES) // beyond the default: -Dmodelkeeper.stress.seconds
  void randomOperationsWithFaults_afterQuiescence_keepEveryInvariant() throws Exception {
    System.out.println(
        "[stress] seed "
            + SEED
            + " (reproduce the per-thread sequences with -Dmodelkeeper.stress.seed="
            + SEED
            + "), "
            + SECONDS
            + " s, "
            + WORKERS
            + " workers");
    Logger core = Logger.getLogger("dev.modelkeeper.core");
    Level level = core.getLevel();
    core.setLevel(Level.OFF); // injected failures are logged as warnings by design
    Totals totals = new Totals();
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(SECONDS);
    try {
      int round = 0;
      do {
        Variant variant = Variant.values()[round % Variant.values().length];
        List<String> violations = new Round(round, variant, totals).run();
        assertThat(violations)
            .as("round %d (%s), seed %d: invariant violations", round, variant, SEED)
            .isEmpty();
        round++;
      } while (System.nanoTime() < end);
      totals.rounds = round;
    } finally {
      core.setLevel(level);
    }
    System.out.println("[stress] " + totals);
    assertThat(totals.operations.sum()).as("seed %d: operations run", SEED).isPositive();
    assertThat(totals.loads.sum()).as("seed %d: models built", SEED).isPositive();
  }

  /** Fault decisions, drawn from the seeded random of the thread that runs the faulty code. */
  static final class Faults {
    private final AtomicBoolean on = new AtomicBoolean(true);
    private final ThreadLocal<SplittableRandom> random;

    Faults(long seed) {
      SplittableRandom root = new SplittableRandom(seed);
      this.random = ThreadLocal.withInitial(() -> split(root));
    }

    private static synchronized SplittableRandom split(SplittableRandom root) {
      return root.split();
    }

    void use(SplittableRandom r) {
      random.set(r);
    }

    boolean fails() {
      return on.get() && random.get().nextInt(100) < 8;
    }

    /** Mostly nothing, often up to 200 us, sometimes a stall longer than the lifecycle timeout. */
    void latency() {
      if (!on.get()) {
        return;
      }
      int p = random.get().nextInt(100);
      if (p < 4) {
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(8 + random.get().nextInt(12)));
      } else if (p < 30) {
        LockSupport.parkNanos(random.get().nextInt(200_000));
      }
    }

    void stop() {
      on.set(false);
    }
  }

  /** Counters over all rounds. */
  static final class Totals {
    final LongAdder operations = new LongAdder();
    final LongAdder leases = new LongAdder();
    final LongAdder expectedFailures = new LongAdder();
    final LongAdder interrupts = new LongAdder();
    final LongAdder loads = new LongAdder();
    final LongAdder evictions = new LongAdder();
    final LongAdder removals = new LongAdder();
    final Map<String, LongAdder> failuresByType = new ConcurrentHashMap<>();
    int rounds;

    @Override
    public String toString() {
      Map<String, Long> failures = new TreeMap<>();
      failuresByType.forEach((k, v) -> failures.put(k, v.sum()));
      return rounds
          + " rounds, "
          + operations.sum()
          + " operations ("
          + leases.sum()
          + " leases used), "
          + loads.sum()
          + " models built, "
          + evictions.sum()
          + " evictions, "
          + removals.sum()
          + " removals, "
          + interrupts.sum()
          + " interrupts sent, "
          + expectedFailures.sum()
          + " operations refused or failed as documented "
          + failures;
    }
  }

  /** One stack, its workers and the chaos thread, then the checks. */
  static final class Round {
    final int index;
    final Variant variant;
    final Totals totals;
    final Faults faults;
    final TestRegistry registry = new TestRegistry();
    final BaseModelManager base;
    final WithFixedSizeCache cache;
    final ModelManager top;
    final List<String> violations = new CopyOnWriteArrayList<>();
    final ExecutorService asyncPool = Executors.newFixedThreadPool(2);
    final ScheduledExecutorService idleSweeps = Executors.newSingleThreadScheduledExecutor();
    final Residents residents;
    volatile boolean stop;

    Round(int index, Variant variant, Totals totals) {
      this.index = index;
      this.variant = variant;
      this.totals = totals;
      this.faults = new Faults(SEED * 31 + index);
      for (String[] key : KEYS) {
        registry.add(resolved(key));
        registry.size(resolved(key), key[0].equals("m3") ? 120 : 100);
      }
      registry
          .failRandomly(faults::fails, faults::fails)
          .duringLoad(faults::latency)
          .duringClear(faults::latency);
      ManagerOptions.Builder options =
          ManagerOptions.builder()
              .lifecycleTimeout(Duration.ofMillis(10))
              .drainTimeout(variant == Variant.LIVENESS ? LIVENESS_DRAIN : Duration.ofMillis(5))
              .failureBackoff(Duration.ofMillis(1), Duration.ofMillis(4))
              .executor(asyncPool);
      if (variant == Variant.NO_BUDGET) {
        options.leakThreshold(Duration.ofMillis(200));
      }
      base = new BaseModelManager(registry, options.build());
      switch (variant) {
        case COUNT_BUDGET:
          cache =
              new WithFixedSizeCache(
                  base,
                  CacheOptions.builder(3)
                      .capacityTimeout(Duration.ofMillis(10))
                      .expireAfterIdle(Duration.ofMillis(2))
                      .scheduler(idleSweeps)
                      .build());
          top = new ModelManagerDecorator(cache) {};
          break;
        case BYTE_BUDGET:
          cache =
              new WithFixedSizeCache(
                  base,
                  CacheOptions.builder(4)
                      .maxBytes(250)
                      .capacityTimeout(Duration.ofMillis(10))
                      .build());
          top = cache;
          break;
        default:
          cache = null;
          top = base;
      }
      residents = Evictions.of(base);
    }

    List<String> run() throws InterruptedException {
      List<Thread> workers = new ArrayList<>();
      SplittableRandom seeds = new SplittableRandom(SEED ^ (index * 0x9E3779B97F4A7C15L));
      for (int i = 0; i < WORKERS; i++) {
        SplittableRandom r = seeds.split();
        Thread t = new Thread(() -> work(r), "stress-" + index + "-" + i);
        t.setDaemon(true);
        workers.add(t);
      }
      SplittableRandom chaosRandom = seeds.split();
      Thread chaos = new Thread(() -> interrupt(workers, chaosRandom), "stress-chaos-" + index);
      chaos.setDaemon(true);
      workers.forEach(Thread::start);
      chaos.start();
      long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ROUND_MILLIS);
      while (System.nanoTime() < deadline && violations.isEmpty()) {
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20)); // pacing the clock, not ordering
      }
      stop = true;
      chaos.join(TimeUnit.SECONDS.toMillis(JOIN_SECONDS));
      for (Thread t : workers) {
        t.join(TimeUnit.SECONDS.toMillis(JOIN_SECONDS));
        if (t.isAlive()) {
          violations.add(t.getName() + " did not finish (hang): " + stackOf(t));
        }
      }
      if (chaos.isAlive()) {
        violations.add("chaos thread did not finish");
      }
      idleSweeps.shutdownNow();
      asyncPool.shutdown(); // abandoned async acquisitions finish (and close their leases) first
      if (!asyncPool.awaitTermination(JOIN_SECONDS, TimeUnit.SECONDS)) {
        violations.add("async acquisitions did not finish (hang)");
      }
      if (!violations.isEmpty()) {
        return violations;
      }
      violations.addAll(Invariants.checkQuiescent(top, base, cache, registry, true));
      faults.stop();
      try {
        top.clear();
      } catch (RuntimeException e) {
        violations.add("clear() without faults failed: " + e);
      }
      violations.addAll(Invariants.checkQuiescent(top, base, cache, registry, true));
      if (!top.keys().isEmpty() || !base.lifecycleTable().isEmpty()) {
        violations.add(
            "after clear(): keys " + top.keys() + ", lifecycle table " + base.lifecycleTable());
      }
      if (cache != null && (cache.usedSlots() != 0 || cache.usedBytes() != 0)) {
        violations.add(
            "after clear() the budget still holds "
                + cache.usedSlots()
                + " slots and "
                + cache.usedBytes()
                + " bytes");
      }
      var stats = base.stats();
      totals.loads.add(stats.loads());
      totals.evictions.add(stats.evictionsTotal());
      totals.removals.add(stats.removals());
      return violations;
    }

    private void interrupt(List<Thread> workers, SplittableRandom r) {
      while (!stop) {
        LockSupport.parkNanos(50_000 + r.nextInt(400_000)); // pacing, not ordering
        workers.get(r.nextInt(workers.size())).interrupt();
        totals.interrupts.increment();
      }
    }

    private void work(SplittableRandom r) {
      faults.use(r);
      while (!stop) {
        String[] key = KEYS[r.nextInt(KEYS.length)];
        int op = r.nextInt(100);
        String name = "?";
        try {
          if (op < 35) {
            name = "acquire";
            lease(key, r);
          } else if (op < 40) {
            name = "acquireAsync";
            var pending = top.acquireAsync(key[0], "key", key[1]);
            ModelLease lease;
            try {
              lease = pending.get(JOIN_SECONDS, TimeUnit.SECONDS);
            } catch (InterruptedException gaveUp) {
              pending.thenAccept(ModelLease::close); // whoever abandons a lease closes it
              throw gaveUp;
            }
            use(lease, r);
          } else if (op < 45) {
            name = "nested acquire";
            try (ModelLease outer = top.acquire(key[0], "key", key[1])) {
              String[] inner = KEYS[r.nextInt(KEYS.length)];
              lease(inner, r);
              checkLease(outer);
            }
          } else if (op < 60) {
            name = "addModel";
            top.addModel(key[0], "key", key[1]);
          } else if (op < 70) {
            name = "remove";
            top.remove(resolved(key));
          } else if (op < 72) {
            name = "clear";
            top.clear();
          } else if (op < 80) {
            name = "contains";
            top.contains(resolved(key));
          } else if (op < 88) {
            name = "get";
            top.get(resolved(key));
          } else if (op < 92) {
            name = "evict";
            if (cache != null && r.nextBoolean()) {
              cache.expireIdle();
            } else {
              residents.evict(resolved(key), RemovalCause.COUNT_BUDGET);
            }
          } else {
            name = "snapshots";
            top.keys();
            top.size();
            top.describeModels();
            top.stats();
            if (cache != null) {
              cache.lruOrder();
              cache.usedSlots();
            }
          }
        } catch (ModelKeeperException expected) {
          if (variant == Variant.LIVENESS && expected instanceof LeaseDrainTimeoutException) {
            violations.add(
                name
                    + " waited "
                    + LIVENESS_DRAIN
                    + " for leases held a few ms: an idle report was lost");
          }
          totals.expectedFailures.increment();
          totals
              .failuresByType
              .computeIfAbsent(expected.getClass().getSimpleName(), k -> new LongAdder())
              .increment();
        } catch (ExecutionException e) {
          if (!(e.getCause() instanceof ModelKeeperException)) {
            violations.add(name + " failed unexpectedly: " + describe(e.getCause()));
          }
          totals.expectedFailures.increment();
        } catch (InterruptedException | TimeoutException e) {
          if (e instanceof TimeoutException) {
            violations.add(name + " did not complete within " + JOIN_SECONDS + " s");
          }
        } catch (Throwable unexpected) {
          violations.add(name + " failed unexpectedly: " + describe(unexpected));
        }
        totals.operations.increment();
        Thread.interrupted(); // an interrupt is aimed at one operation
      }
    }

    private void lease(String[] key, SplittableRandom r) {
      use(top.acquire(key[0], "key", key[1]), r);
    }

    /** "Inference" through a lease: the model must stay registered and uncleared throughout. */
    private void use(ModelLease lease, SplittableRandom r) {
      try (lease) {
        TestModel model = (TestModel) lease.model();
        model.beginUse();
        try {
          checkLease(lease);
          if (r.nextInt(4) == 0) {
            LockSupport.parkNanos(r.nextInt(300_000)); // a slower inference, not ordering
          }
          checkLease(lease);
        } finally {
          model.endUse();
        }
        totals.leases.increment();
      }
    }

    private void checkLease(ModelLease lease) {
      if (!top.contains(lease.modelId()) || top.get(lease.modelId()) != lease.model()) {
        violations.add(
            "a lease of '" + lease.modelId() + "' saw its model unregistered or replaced");
      }
    }

    static String resolved(String[] key) {
      return key[1] != null ? key[1] : key[0];
    }

    private static String describe(Throwable t) {
      StringWriter out = new StringWriter();
      t.printStackTrace(new PrintWriter(out));
      return out.toString();
    }

    private static String stackOf(Thread t) {
      StringBuilder b = new StringBuilder();
      for (StackTraceElement e : t.getStackTrace()) {
        b.append("\n\tat ").append(e);
      }
      return b.toString();
    }
  }
}
