package dev.modelkeeper.core.verification;

import dev.modelkeeper.core.BaseModelManager;
import dev.modelkeeper.core.CacheOptions;
import dev.modelkeeper.core.ManagerOptions;
import dev.modelkeeper.core.ModelLease;
import dev.modelkeeper.core.WithFixedSizeCache;
import dev.modelkeeper.core.testkit.FakeTicker;
import dev.modelkeeper.core.testkit.Invariants;
import dev.modelkeeper.core.testkit.TestModel;
import dev.modelkeeper.core.testkit.TestRegistry;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.Validate;
import org.jetbrains.lincheck.datastructures.verifier.EpsilonVerifier;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Model checking with eviction on: a budget of one model over {@code a}, {@code a} under the alias
 * {@code x}, and {@code b}, whose every model fails its first {@code clearCache()}. Which load wins
 * the single slot depends on the interleaving, so results are not compared with a sequential model;
 * instead every invocation must keep the invariants: no overlapping lifecycles, a lease never sees
 * its model unloaded or cleared, the LRU order mirrors the registry, the budget is never exceeded
 * (counting loading models), no lease stays open and no lifecycle entry outlives its use.
 *
 * <p>The capacity wait is off (a load that finds no idle victim is refused at once): under the
 * model checker {@code System.nanoTime()} stands still, so a timed condition wait can only end by a
 * signal, and the checker reports such waits as livelocks. Waiting for room is exercised by the
 * stress harness and the example tests instead.
 */
@Tag("lincheck")
@Param(name = "key", gen = IntGen.class, conf = Keys.CONF)
public class EvictionModelCheckingTest {

  private final TestRegistry registry =
      TestRegistry.of(Keys.A, Keys.X, Keys.B).failFirstClears(Keys.B, 1);
  private final BaseModelManager base =
      new BaseModelManager(
          registry,
          ManagerOptions.builder()
              .ticker(FakeTicker.autoAdvancing())
              .executor(Runnable::run)
              .build());
  private final WithFixedSizeCache cache =
      new WithFixedSizeCache(base, CacheOptions.builder(1).capacityTimeout(Duration.ZERO).build());

  @Operation
  public String add(@Param(name = "key") int key) {
    try {
      cache.addModel(Keys.requested(key), "key", Keys.alias(key));
      return "ok";
    } catch (RuntimeException e) {
      return Keys.outcome(e);
    }
  }

  @Operation
  public String acquire(@Param(name = "key") int key) {
    try (ModelLease lease = cache.acquire(Keys.requested(key), "key", Keys.alias(key))) {
      TestModel model = (TestModel) lease.model();
      model.beginUse();
      try {
        if (!cache.contains(lease.modelId()) || cache.get(lease.modelId()) != model) {
          throw new IllegalStateException("lease of " + lease.modelId() + " saw it unloaded");
        }
      } finally {
        model.endUse();
      }
      return lease.modelId();
    } catch (RuntimeException e) {
      return Keys.outcome(e);
    }
  }

  @Operation
  public String remove(@Param(name = "key") int key) {
    try {
      cache.remove(Keys.resolved(key));
      return "ok";
    } catch (RuntimeException e) {
      return Keys.outcome(e);
    }
  }

  @Validate
  public void invariantsHold() {
    LincheckRuns.require(Invariants.checkQuiescent(cache, base, cache, registry, true));
    LincheckRuns.Invocations.completed(this);
  }

  @Test
  @Timeout(value = 30, unit = TimeUnit.MINUTES) // beyond the default: -Dmodelkeeper.lincheck.scale
  public void evictingOperations_underModelChecking_keepInvariants() {
    int scenarios = 15;
    LincheckRuns.report(
        "budget of one with failing clears, model checking",
        scenarios * LincheckRuns.SCALE,
        () ->
            LincheckRuns.modelChecking(scenarios, 20)
                .threads(3)
                .actorsPerThread(2)
                .actorsBefore(1)
                .actorsAfter(1)
                .verifier(EpsilonVerifier.class)
                .check(EvictionModelCheckingTest.class));
  }
}
