package dev.modelkeeper.core.verification;

import dev.modelkeeper.core.BaseModelManager;
import dev.modelkeeper.core.ManagerOptions;
import dev.modelkeeper.core.ModelLease;
import dev.modelkeeper.core.testkit.FakeTicker;
import dev.modelkeeper.core.testkit.Invariants;
import dev.modelkeeper.core.testkit.TestRegistry;
import java.lang.reflect.Method;
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
 * Model checking of one fixed scenario, every interleaving the checker reaches: {@code a} is
 * loaded; then one thread removes it while two others each take a lease on it and close it. The
 * removal must finish: it drains the leases, and the thread that leaves the entry idle reports so.
 * That thread may be one whose lease was refused: a lease attempt counts itself before it sees the
 * entry closed, so when it backs out after the last real lease closed, it is the last to leave and
 * owes the report. A lost report leaves the removal waiting for nobody; under the model checker its
 * timed wait never times out (time stands still), so the checker reports the hang.
 */
@Tag("lincheck")
public class DrainModelCheckingTest {

  private final TestRegistry registry = TestRegistry.of("a");
  private final BaseModelManager manager =
      new BaseModelManager(
          registry,
          ManagerOptions.builder()
              .ticker(FakeTicker.autoAdvancing())
              .executor(Runnable::run)
              .build());

  @Operation
  public String add() {
    manager.addModel("a", "key");
    return "ok";
  }

  @Operation
  public String leaseAndClose() {
    try (ModelLease lease = manager.acquire("a", "key")) {
      return lease.modelId();
    } catch (RuntimeException e) {
      return Keys.outcome(e);
    }
  }

  @Operation
  public String remove() {
    try {
      manager.remove("a");
      return "ok";
    } catch (RuntimeException e) {
      return Keys.outcome(e);
    }
  }

  @Validate
  public void invariantsHold() {
    LincheckRuns.require(Invariants.checkQuiescent(manager, manager, null, registry, true));
    LincheckRuns.Invocations.completed(this);
  }

  private static Actor actor(String operation) throws NoSuchMethodException {
    Method m = DrainModelCheckingTest.class.getMethod(operation);
    return new Actor(m, List.of(), false, false, false, false, false);
  }

  @Test
  @Timeout(value = 30, unit = TimeUnit.MINUTES) // beyond the default: -Dmodelkeeper.lincheck.scale
  public void removeRacingTwoLeases_alwaysFinishes() throws Exception {
    int invocations = 2_000 * LincheckRuns.SCALE;
    ExecutionScenario scenario =
        new ExecutionScenario(
            List.of(actor("add")),
            List.of(
                List.of(actor("leaseAndClose")),
                List.of(actor("remove")),
                List.of(actor("leaseAndClose"))),
            List.of(),
            null);
    LincheckRuns.report(
        "remove racing two leases, model checking",
        1,
        () ->
            LincheckRuns.modelChecking(0, invocations)
                .addCustomScenario(scenario)
                .verifier(EpsilonVerifier.class)
                .check(DrainModelCheckingTest.class));
  }
}
