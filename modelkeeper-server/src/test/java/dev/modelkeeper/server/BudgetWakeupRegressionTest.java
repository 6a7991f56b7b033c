package dev.modelkeeper.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.modelkeeper.core.BaseModelManager;
import dev.modelkeeper.core.CacheOptions;
import dev.modelkeeper.core.CapacityExceededException;
import dev.modelkeeper.core.LifecycleListener;
import dev.modelkeeper.core.ManagerOptions;
import dev.modelkeeper.core.Model;
import dev.modelkeeper.core.ModelLease;
import dev.modelkeeper.core.WithFixedSizeCache;
import dev.modelkeeper.core.testkit.Gate;
import dev.modelkeeper.testkit.FakeModels;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Pins the lost wake-up that the HTTP churn test exposed (fixed in core): a load waiting for room
 * in {@link WithFixedSizeCache} tries to evict a model whose constructor has returned but which is
 * not READY yet (its {@code loaded} event fires before it becomes leasable). The eviction answers
 * BUSY, so the load waits for room; the waiter must still be woken when that model becomes READY
 * and idle, instead of sleeping until its capacity timeout. The schedule is forced with a gate in a
 * listener that runs after the budget's, as the server's own listeners do.
 */
class BudgetWakeupRegressionTest {

  @Test
  void waitingLoad_whenVictimBecomesReadyAndIdle_getsRoom() throws Exception {
    FakeModels models = FakeModels.of("y/1", "x/1");
    BaseModelManager base = new BaseModelManager(models, ManagerOptions.defaults());
    WithFixedSizeCache cache =
        new WithFixedSizeCache(
            base, CacheOptions.builder(1).capacityTimeout(Duration.ofSeconds(20)).build());
    Gate afterLoaded = new Gate();
    cache.addListener(
        new LifecycleListener() {
          @Override
          public void loaded(String modelId, Model model, long sizeBytes, long loadNanos) {
            if (modelId.equals("y/1")) {
              afterLoaded.pass(); // the budget has already counted y as resident
            }
          }
        });
    CompletableFuture<Void> loadY =
        CompletableFuture.runAsync(
            () -> {
              try (ModelLease lease = cache.acquire("y/1", null)) {
                assertThat(lease.modelId()).isEqualTo("y/1");
              }
            });
    afterLoaded.awaitEntered();
    CompletableFuture<Boolean> loadX =
        CompletableFuture.supplyAsync(
            () -> {
              try (ModelLease lease = cache.acquire("x/1", null)) {
                return true;
              } catch (CapacityExceededException e) {
                return false;
              }
            });
    await().atMost(Duration.ofSeconds(10)).until(() -> cache.stats().capacityWaits() == 1);
    afterLoaded.open();
    loadY.get(10, TimeUnit.SECONDS);
    assertThat(loadX.get(30, TimeUnit.SECONDS)).as("the waiting load got room").isTrue();
    assertThat(cache.keys()).hasSize(1);
  }
}
