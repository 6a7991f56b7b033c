package dev.modelkeeper.core.verification;

import dev.modelkeeper.core.*;
import dev.modelkeeper.core.testkit.*;
import java.time.Duration;
import org.jetbrains.lincheck.datastructures.*;
import org.junit.jupiter.api.Test;

@Param(name = "key", gen = IntGen.class, conf = "0:2")
public class Proto {
  static final java.util.concurrent.atomic.AtomicLong N = new java.util.concurrent.atomic.AtomicLong();
  private final TestRegistry registry = TestRegistry.of("a", "x").failNextLoads("bad", 0);
  private final BaseModelManager base;
  private final WithFixedSizeCache cache;
  public Proto() {
    N.incrementAndGet();
    registry.add("bad").failNextLoads("bad", Integer.MAX_VALUE);
    base = new BaseModelManager(registry, ManagerOptions.builder().ticker(FakeTicker.manual()).executor(Runnable::run).build());
    cache = new WithFixedSizeCache(base, 8);
  }
  static String req(int k) { return k == 2 ? "bad" : "a"; }
  static String alias(int k) { return k == 1 ? "x" : null; }
  static String res(int k) { return k == 0 ? "a" : k == 1 ? "x" : "bad"; }
  static String fail(RuntimeException e) { return e instanceof ModelLoadException ? "load failed" : e.getClass().getSimpleName(); }

  @Operation public String add(@Param(name = "key") int k) {
    try { cache.addModel(req(k), "key", alias(k)); return "ok"; } catch (RuntimeException e) { return fail(e); }
  }
  @Operation public String acquire(@Param(name = "key") int k) {
    try (ModelLease l = cache.acquire(req(k), "key", alias(k))) {
      TestModel m = (TestModel) l.model(); m.beginUse(); m.endUse(); return l.modelId() + "<-" + m.requestedId;
    } catch (RuntimeException e) { return fail(e); }
  }
  @Operation public String remove(@Param(name = "key") int k) {
    try { cache.remove(res(k)); return "ok"; } catch (RuntimeException e) { return fail(e); }
  }
  @Operation public boolean contains(@Param(name = "key") int k) { return cache.contains(res(k)); }

  @Validate public void invariants() {
    var v = Invariants.check(cache, base, cache, registry);
    if (!v.isEmpty()) throw new IllegalStateException(v.toString());
  }

  public static class Spec {
    private final java.util.Set<String> loaded = new java.util.HashSet<>();
    public String add(int k) { if (k == 2) return "load failed"; loaded.add(res(k)); return "ok"; }
    public String acquire(int k) { if (k == 2) return "load failed"; loaded.add(res(k)); return res(k) + "<-a"; }
    public String remove(int k) { loaded.remove(res(k)); return "ok"; }
    public boolean contains(int k) { return loaded.contains(res(k)); }
  }

  @Test public void mc() {
    long t = System.nanoTime();
    var o = new ModelCheckingOptions().iterations(Integer.getInteger("it", 10)).invocationsPerIteration(Integer.getInteger("inv", 200));
    if (Boolean.getBoolean("nostd")) o.analyzeStdLib$lincheck(false);
    o.threads(3).actorsPerThread(2).actorsBefore(1).actorsAfter(1)
      .sequentialSpecification(Spec.class).check(Proto.class);
    System.out.println("MC took " + (System.nanoTime() - t) / 1_000_000 + " ms, instances " + N.get());
  }
  @Test public void stress() {
    long t = System.nanoTime(); N.set(0);
    new StressOptions().iterations(10).invocationsPerIteration(1000).threads(3).actorsPerThread(3).actorsBefore(1).actorsAfter(1)
      .sequentialSpecification(Spec.class).check(Proto.class);
    System.out.println("STRESS took " + (System.nanoTime() - t) / 1_000_000 + " ms, instances " + N.get());
  }
}
