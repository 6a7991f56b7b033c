package dev.modelkeeper.core.verification;

import dev.modelkeeper.core.BaseModelManager;
import dev.modelkeeper.core.CacheOptions;
import dev.modelkeeper.core.ManagerOptions;
import dev.modelkeeper.core.ModelLease;
import dev.modelkeeper.core.StepBackException;
import dev.modelkeeper.core.WithFixedSizeCache;
import dev.modelkeeper.core.testkit.FakeTicker;
import dev.modelkeeper.core.testkit.Invariants;
import dev.modelkeeper.core.testkit.TestRegistry;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jetbrains.kotlinx.lincheck.Actor;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Validate;
import org.jetbrains.lincheck.datastructures.verifier.EpsilonVerifier;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Model checking of the wait cycle, every interleaving the checker reaches: models {@code a} and
 * {@code b} take 40 bytes each of a budget of 100, and a run of either needs 30 bytes of working
 * memory while it holds its model's lease: the budget holds both models and one run, or one model
 * and both runs. Two threads each run one model once, as a model's executor does: lease, reserve
 * working memory, and on {@link StepBackException} close the lease, wait for room and try again.
 * Both runs must finish. Were both to wait holding their leases, neither could evict the other's
 * model, and under the model checker time stands still, so their timed waits would never end: the
 * checker reports the hang.
 */
@Tag("lincheck")
public class WaitCycleModelCheckingTest {

  private final TestRegistry registry = TestRegistry.of("a", "b").size("a", 40).size("b", 40);
  private final BaseModelManager base =
      new BaseModelManager(
          registry,
          ManagerOptions.builder()
              .ticker(FakeTicker.autoAdvancing())
              .executor(Runnable::run)
              .build());
  private final WithFixedSizeCache budget =
      new WithFixedSizeCache(
          base,
          CacheOptions.builder(8).maxBytes(100).capacityTimeout(Duration.ofMinutes(10)).build());

  @Operation
  public String addBoth() {
    budget.addModel("a", "key");
    budget.addModel("b", "key");
    return "ok";
  }

  @Operation
  public String runA() {
    return run("a");
  }

  @Operation
  public String runB() {
    return run("b");
  }

  private String run(String id) {
    while (true) {
      try (ModelLease lease = budget.acquire(id, "key");
          WithFixedSizeCache.Reservation working =
              budget.reserveWorkingOrStepBack(lease.modelId(), 30)) {
        return lease.modelId();
      } catch (StepBackException back) {
        back.awaitRoom();
      } catch (RuntimeException e) {
        return Keys.outcome(e);
      }
    }
  }

  @Validate
  public void invariantsHold() {
    LincheckRuns.require(Invariants.checkQuiescent(budget, base, budget, registry, true));
    if (budget.workingBytes() != 0 || !budget.waits().isEmpty()) {
      throw new IllegalStateException(
          "left behind: " + budget.workingBytes() + " working bytes, waits " + budget.waits());
    }
    LincheckRuns.Invocations.completed(this);
  }

  private static Actor actor(String operation) throws NoSuchMethodException {
    Method m = WaitCycleModelCheckingTest.class.getMethod(operation);
    return new Actor(m, List.of(), false, false, false, false, false);
  }

  @Test
  @Timeout(value = 30, unit = TimeUnit.MINUTES) // beyond the default: -Dmodelkeeper.lincheck.scale
  public void twoRunsHoldingLeases_needingWorkingMemory_bothFinish() throws Exception {
    int invocations = 1_000 * LincheckRuns.SCALE;
    ExecutionScenario scenario =
        new ExecutionScenario(
            List.of(actor("addBoth")),
            List.of(List.of(actor("runA")), List.of(actor("runB"))),
            List.of(),
            null);
    LincheckRuns.report(
        "two runs with leases needing working memory, model checking",
        1,
        () ->
            LincheckRuns.modelChecking(0, invocations)
                .addCustomScenario(scenario)
                .verifier(EpsilonVerifier.class)
                .check(WaitCycleModelCheckingTest.class));
  }
}
