package dev.modelkeeper.core.verification;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.modelkeeper.core.BaseModelManager;
import dev.modelkeeper.core.CacheOptions;
import dev.modelkeeper.core.CapacityExceededException;
import dev.modelkeeper.core.ManagerOptions;
import dev.modelkeeper.core.WithFixedSizeCache;
import dev.modelkeeper.core.testkit.FakeTicker;
import dev.modelkeeper.core.testkit.Invariants;
import dev.modelkeeper.core.testkit.TestRegistry;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;

/**
 * Regression (fixed in the budget's make-room loop): a load that needs room and finds only a victim
 * whose {@code clearCache()} throws used to retry that same eviction in a hot loop until its
 * capacity deadline, because the failed unload returns the victim to READY and announces it idle,
 * which woke the evicting caller itself. It must try the failing victim once, then refuse (nothing
 * else can be evicted).
 */
class EvictionRetryStormTest {

  @Test
  void load_whenOnlyVictimsClearCacheThrows_triesItOnceAndRefusesAtOnce() {
    Logger core = Logger.getLogger("dev.modelkeeper.core");
    Level level = core.getLevel();
    core.setLevel(Level.OFF); // a regression would log one warning per retry
    try {
      loadWithFailingVictim();
    } finally {
      core.setLevel(level);
    }
  }

  private static void loadWithFailingVictim() {
    AtomicInteger clearAttempts = new AtomicInteger();
    TestRegistry registry = TestRegistry.of("a", "b").duringClear(clearAttempts::incrementAndGet);
    BaseModelManager base =
        new BaseModelManager(
            registry, ManagerOptions.builder().ticker(FakeTicker.autoAdvancing()).build());
    WithFixedSizeCache cache =
        new WithFixedSizeCache(
            base, CacheOptions.builder(1).capacityTimeout(Duration.ofSeconds(3)).build());
    cache.addModel("a", "key");
    registry.last("a").failClearWith(new IllegalStateException("stuck"));

    long start = System.nanoTime();
    assertThatThrownBy(() -> cache.addModel("b", "key"))
        .isInstanceOf(CapacityExceededException.class);
    Duration took = Duration.ofNanos(System.nanoTime() - start);

    assertThat(clearAttempts.get()).as("clearCache() attempts on the failing victim").isEqualTo(1);
    assertThat(took)
        .as("refused without waiting for the capacity deadline")
        .isLessThan(Duration.ofSeconds(2));
    assertThat(cache.keys()).containsExactly("a");
    assertThat(registry.constructions("b")).isZero();
    assertThat(Invariants.checkQuiescent(cache, base, cache, registry, true)).isEmpty();
  }
}
