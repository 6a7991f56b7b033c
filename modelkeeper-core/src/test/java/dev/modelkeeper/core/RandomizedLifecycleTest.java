package dev.modelkeeper.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.modelkeeper.core.testkit.Async;
import dev.modelkeeper.core.testkit.FakeTicker;
import dev.modelkeeper.core.testkit.Invariants;
import dev.modelkeeper.core.testkit.TestRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Test;

/**
 * Eight threads drive add, remove, contains, get and clear over a few identifiers (one of them
 * through an alias) while 10% of constructors and clearCache() calls fail; after quiescence every
 * invariant must hold.
 */
class RandomizedLifecycleTest {

  private static final String[] IDS = {"a", "b", "c", "d"};
  private static final int THREADS = 8;
  private static final int OPS_PER_THREAD = 4_000;

  @Test
  void randomOperationsWithFailures_leaveConsistentState() throws Exception {
    long seed = Long.getLong("modelkeeper.seed", System.nanoTime());
    TestRegistry registry =
        TestRegistry.of(IDS)
            .add("alias")
            .failRandomly(
                () -> ThreadLocalRandom.current().nextInt(10) == 0,
                () -> ThreadLocalRandom.current().nextInt(10) == 0);
    BaseModelManager base =
        new BaseModelManager(
            registry,
            ManagerOptions.builder()
                .ticker(FakeTicker.autoAdvancing())
                .failureBackoff(Duration.ZERO, Duration.ZERO)
                .build());
    WithFixedSizeCache cache =
        new WithFixedSizeCache(
            new ModelManagerDecorator(base) {},
            CacheOptions.builder(3).capacityTimeout(Duration.ofSeconds(5)).build());
    List<Throwable> surprises = new CopyOnWriteArrayList<>();

    List<Async<Void>> workers = new ArrayList<>();
    for (int t = 0; t < THREADS; t++) {
      Random random = new Random(seed + t);
      workers.add(
          Async.run(
              "worker-" + t,
              () -> {
                for (int i = 0; i < OPS_PER_THREAD; i++) {
                  String id = IDS[random.nextInt(IDS.length)];
                  try {
                    switch (random.nextInt(20)) {
                      case 0:
                        cache.clear();
                        break;
                      case 1:
                      case 2:
                      case 3:
                        cache.remove(random.nextBoolean() ? id : "alias");
                        break;
                      case 4:
                        cache.addModel(id, "k", "alias");
                        break;
                      case 5:
                      case 6:
                        cache.contains(id);
                        break;
                      case 7:
                        cache.get(id);
                        break;
                      default:
                        cache.addModel(id, "k");
                    }
                  } catch (ModelLoadException
                      | ModelUnloadException
                      | ModelNotLoadedException
                      | CapacityExceededException expected) {
                    // injected failures and their consequences
                  } catch (RuntimeException e) {
                    surprises.add(e);
                  }
                }
              }));
    }
    for (Async<Void> w : workers) {
      w.join();
    }

    assertThat(surprises).as("unexpected exceptions (seed %d)", seed).isEmpty();
    assertThat(Invariants.check(cache, base, cache, registry)).as("seed %d", seed).isEmpty();
    assertThat(registry.constructions()).isGreaterThan(100);
    assertThat(cache.stats().loads()).isEqualTo(registry.created().size());
  }
}
