package dev.modelkeeper.core.verification;

import dev.modelkeeper.core.BaseModelManager;
import dev.modelkeeper.core.ManagerOptions;
import dev.modelkeeper.core.ModelLease;
import dev.modelkeeper.core.ModelManager;
import dev.modelkeeper.core.ModelManagerDecorator;
import dev.modelkeeper.core.ModelNotLoadedException;
import dev.modelkeeper.core.WithFixedSizeCache;
import dev.modelkeeper.core.testkit.FakeTicker;
import dev.modelkeeper.core.testkit.Invariants;
import dev.modelkeeper.core.testkit.TestModel;
import dev.modelkeeper.core.testkit.TestRegistry;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.StressOptions;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Linearizability of add, acquire (lease, use, close), remove, contains and get against a set of
 * resolved identifiers, over a base manager wrapped in a budget too large to evict and a
 * transparent decorator. The constructor of {@code b} always fails (a checked exception, then
 * back-off refusals: the ticker never moves), so failed loads must leave no trace. Each invocation
 * is also checked against every invariant of the architecture once the checker returns.
 */
@Tag("lincheck")
@Param(name = "key", gen = IntGen.class, conf = Keys.CONF)
public class ManagerLinearizabilityTest {

  private final TestRegistry registry = TestRegistry.of(Keys.A, Keys.X, Keys.B);
  private final BaseModelManager base =
      new BaseModelManager(
          registry,
          ManagerOptions.builder().ticker(FakeTicker.manual()).executor(Runnable::run).build());
  private final WithFixedSizeCache cache = new WithFixedSizeCache(base, 8);
  private final ModelManager top = new ModelManagerDecorator(cache) {};

  public ManagerLinearizabilityTest() {
    registry.failNextLoads(Keys.B, Integer.MAX_VALUE);
  }

  @Operation
  public String add(@Param(name = "key") int key) {
    try {
      top.addModel(Keys.requested(key), "key", Keys.alias(key));
      return "ok";
    } catch (RuntimeException e) {
      return Keys.outcome(e);
    }
  }

  /** Leases, "infers" and closes; answers which model it got and whether the lease held. */
  @Operation
  public String acquire(@Param(name = "key") int key) {
    try (ModelLease lease = top.acquire(Keys.requested(key), "key", Keys.alias(key))) {
      TestModel model = (TestModel) lease.model();
      model.beginUse();
      try {
        if (!top.contains(lease.modelId()) || top.get(lease.modelId()) != model) {
          return "lease of " + lease.modelId() + " saw it unloaded";
        }
      } finally {
        model.endUse();
      }
      return lease.modelId() + "<-" + model.requestedId;
    } catch (RuntimeException e) {
      return Keys.outcome(e);
    }
  }

  @Operation
  public String remove(@Param(name = "key") int key) {
    try {
      top.remove(Keys.resolved(key));
      return "ok";
    } catch (RuntimeException e) {
      return Keys.outcome(e);
    }
  }

  @Operation
  public boolean contains(@Param(name = "key") int key) {
    return top.contains(Keys.resolved(key));
  }

  @Operation
  public String get(@Param(name = "key") int key) {
    try {
      return ((TestModel) top.get(Keys.resolved(key))).requestedId;
    } catch (ModelNotLoadedException e) {
      return "not loaded";
    }
  }

  /** After each invocation: every invariant of the architecture (see {@link Invariants}). */
  @Validate
  public void invariantsHold() {
    LincheckRuns.require(Invariants.checkQuiescent(top, base, cache, registry, true));
    LincheckRuns.Invocations.completed(this);
  }

  @Test
  @Timeout(value = 30, unit = TimeUnit.MINUTES) // beyond the default: -Dmodelkeeper.lincheck.scale
  public void operations_underModelChecking_areLinearizableAndKeepInvariants() {
    int scenarios = 20;
    LincheckRuns.report(
        "base+budget+decorator, model checking",
        scenarios * LincheckRuns.SCALE,
        () ->
            LincheckRuns.modelChecking(scenarios, 20)
                .threads(3)
                .actorsPerThread(2)
                .actorsBefore(1)
                .actorsAfter(1)
                .sequentialSpecification(SetOfResolvedIds.class)
                .check(ManagerLinearizabilityTest.class));
  }

  @Test
  @Timeout(value = 30, unit = TimeUnit.MINUTES) // beyond the default: -Dmodelkeeper.lincheck.scale
  public void operations_underStress_areLinearizableAndKeepInvariants() {
    int scenarios = 30;
    LincheckRuns.report(
        "base+budget+decorator, stress",
        scenarios * LincheckRuns.SCALE,
        () ->
            new StressOptions()
                .iterations(scenarios * LincheckRuns.SCALE)
                .invocationsPerIteration(300)
                .threads(3)
                .actorsPerThread(3)
                .actorsBefore(2)
                .actorsAfter(2)
                .sequentialSpecification(SetOfResolvedIds.class)
                .check(ManagerLinearizabilityTest.class));
  }

  /**
   * The sequential specification: a set of resolved identifiers. Loads of {@code b} fail; a lease
   * sees the model built from the requested ID {@code a} (the alias changes only the identifier).
   */
  public static final class SetOfResolvedIds {
    private final Set<String> loaded = new HashSet<>();

    public String add(int key) {
      if (Keys.resolved(key).equals(Keys.B)) {
        return "load failed";
      }
      loaded.add(Keys.resolved(key));
      return "ok";
    }

    public String acquire(int key) {
      String added = add(key);
      return added.equals("ok") ? Keys.resolved(key) + "<-" + Keys.requested(key) : added;
    }

    public String remove(int key) {
      loaded.remove(Keys.resolved(key));
      return "ok";
    }

    public boolean contains(int key) {
      return loaded.contains(Keys.resolved(key));
    }

    public String get(int key) {
      return loaded.contains(Keys.resolved(key)) ? Keys.requested(key) : "not loaded";
    }
  }
}
