package dev.modelkeeper.core.verification;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.jetbrains.lincheck.datastructures.ManagedStrategyGuaranteeKt;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;

/**
 * Shared settings of the Lincheck tests. Sizes scale with {@code -Dmodelkeeper.lincheck.scale=N}
 * (default 1) for longer runs. Thread-safe.
 */
final class LincheckRuns {

  static final int SCALE = Math.max(1, Integer.getInteger("modelkeeper.lincheck.scale", 1));

  /** How long one invocation may run before Lincheck reports it as hung. */
  static final long HANG_THRESHOLD_MS = 180_000;

  private LincheckRuns() {}

  /**
   * Model checking with four kinds of code left out of the explored interleavings: the JDK's
   * logging (not what is verified; it multiplies the switch points), {@code LongAdder} counters
   * (treated as the atomic counters they are), thread-confined collections (see {@link
   * #threadConfined}), and the invariant checker with the invocation counter, which run after the
   * parallel part and must neither switch threads nor be rolled back.
   */
  static ModelCheckingOptions modelChecking(int scenarios, int invocationsPerScenario) {
    return new ModelCheckingOptions()
        .iterations(scenarios * SCALE)
        .invocationsPerIteration(invocationsPerScenario)
        // the first invocation pays for instrumenting the JDK classes it touches; on a loaded
        // two-core machine that alone can approach the default 30 s hang threshold
        .invocationTimeout$lincheck(HANG_THRESHOLD_MS)
        .addGuarantee(
            ManagedStrategyGuaranteeKt.forClasses(
                    (String c) ->
                        c.startsWith("java.util.logging.")
                            || c.startsWith("sun.util.logging.")
                            || c.startsWith("jdk.internal.logger."))
                .allMethods()
                .ignore())
        .addGuarantee(
            ManagedStrategyGuaranteeKt.forClasses(
                    "java.util.concurrent.atomic.LongAdder",
                    "java.util.concurrent.atomic.Striped64")
                .allMethods()
                .treatAsAtomic())
        .addGuarantee(
            ManagedStrategyGuaranteeKt.forClasses(LincheckRuns::threadConfined)
                .allMethods()
                .treatAsAtomic())
        .addGuarantee(
            ManagedStrategyGuaranteeKt.forClasses(
                    "dev.modelkeeper.core.testkit.Invariants", Invocations.class.getName())
                .allMethods()
                .ignore());
  }

  /**
   * Collections that the code under test only touches under a lock or on one thread (the budget's
   * slot table, the manager's LRU order, snapshots, sorting, streams over them), and the lossy read
   * buffer, whose internal races can only drop a recency event, never change a result. Scanning a
   * hash table's empty buckets looks like a spin loop to the checker, which then reports a livelock
   * that cannot happen.
   */
  private static boolean threadConfined(String c) {
    return c.startsWith("java.util.HashMap")
        || c.startsWith("java.util.IdentityHashMap")
        || c.startsWith("java.util.HashSet")
        || c.equals("dev.modelkeeper.core.AccessOrder")
        || c.startsWith("dev.modelkeeper.core.AccessOrder$")
        || c.equals("dev.modelkeeper.core.ReadBuffer")
        || c.startsWith("java.util.ArrayList")
        || c.startsWith("java.util.stream.")
        || c.startsWith("java.util.TimSort")
        || c.startsWith("java.util.ComparableTimSort");
  }

  /**
   * Throws with the violations, if any, so that Lincheck prints the interleaving that led there.
   */
  static void require(List<String> violations) {
    if (!violations.isEmpty()) {
      throw new IllegalStateException("invariants violated: " + violations);
    }
  }

  /** Times {@code run} and prints one figures line for the verification report. */
  static void report(String name, int scenarios, Runnable run) {
    Invocations.reset();
    long start = System.nanoTime();
    Logger core = Logger.getLogger("dev.modelkeeper.core");
    Level level = core.getLevel();
    core.setLevel(Level.SEVERE); // injected clearCache() failures are logged as warnings
    try {
      run.run();
    } finally {
      core.setLevel(level);
    }
    long ms = (System.nanoTime() - start) / 1_000_000;
    System.out.println(
        "[lincheck] "
            + name
            + ": "
            + scenarios
            + " scenarios, "
            + Invocations.completed()
            + " invocations checked, "
            + ms
            + " ms");
  }

  /**
   * Counts invocations that passed validation. Lincheck's model checker restores static state after
   * each invocation; the counter escapes that because its methods are left out of the analysis (see
   * {@link #modelChecking}).
   */
  static final class Invocations {
    private static final AtomicLong COMPLETED = new AtomicLong();

    private Invocations() {}

    static void completed(Object unused) {
      COMPLETED.incrementAndGet();
    }

    static long completed() {
      return COMPLETED.get();
    }

    static void reset() {
      COMPLETED.set(0);
    }
  }
}
