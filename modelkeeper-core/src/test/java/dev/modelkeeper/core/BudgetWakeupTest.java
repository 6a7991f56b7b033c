package dev.modelkeeper.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.modelkeeper.core.testkit.Async;
import dev.modelkeeper.core.testkit.Gate;
import dev.modelkeeper.core.testkit.Invariants;
import dev.modelkeeper.core.testkit.TestRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Pins a lost wake-up: a load waiting for room found its only victim BUSY because that model's
 * constructor had returned but it was not READY yet. Entering READY must wake the waiter; before
 * the fix it slept until its capacity deadline although the victim sat idle.
 */
class BudgetWakeupTest {

  private final TestRegistry registry = TestRegistry.of("victim", "newcomer");
  private final BaseModelManager base = new BaseModelManager(registry);
  private final WithFixedSizeCache cache =
      new WithFixedSizeCache(
          base, CacheOptions.builder(1).capacityTimeout(Duration.ofSeconds(5)).build());

  @Test
  void waiterForRoom_wakesWhenVictimBecomesReady() throws Exception {
    Gate betweenLoadedAndReady = new Gate();
    base.addListener(
        new LifecycleListener() {
          @Override
          public void loaded(String modelId, Model model, long sizeBytes, long loadNanos) {
            if (modelId.equals("victim")) {
              betweenLoadedAndReady.pass();
            }
          }
        });
    Async<Void> victimLoader = Async.run("load-victim", () -> cache.addModel("victim", "k"));
    betweenLoadedAndReady.awaitEntered();
    Async<Void> newcomer = Async.run("load-newcomer", () -> cache.addModel("newcomer", "k"));
    await().until(() -> cache.stats().capacityWaits() == 1);

    betweenLoadedAndReady.open();
    victimLoader.join();
    newcomer.join();

    assertThat(cache.keys()).containsExactly("newcomer");
    assertThat(cache.stats().capacityRejections()).isZero();
    assertThat(Invariants.check(cache, base, cache, registry)).isEmpty();
  }
}
