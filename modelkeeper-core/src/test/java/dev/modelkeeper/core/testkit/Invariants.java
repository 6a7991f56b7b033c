package dev.modelkeeper.core.testkit;

import dev.modelkeeper.core.BaseModelManager;
import dev.modelkeeper.core.ModelDescription;
import dev.modelkeeper.core.ModelManager;
import dev.modelkeeper.core.ModelState;
import dev.modelkeeper.core.WithFixedSizeCache;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Checks the architecture's invariants on a quiescent manager: call it only after every thread that
 * used the manager has been joined. Returns the violations found (empty when all hold).
 */
public final class Invariants {
  private Invariants() {}

  /**
   * @param top the outermost manager the test used
   * @param base the base manager underneath (for the lifecycle table), or null
   * @param cache the budget in the stack, or null
   * @param registry the registry that built every model
   */
  public static List<String> check(
      ModelManager top, BaseModelManager base, WithFixedSizeCache cache, TestRegistry registry) {
    List<String> v = new ArrayList<>(registry.monitor().violations());
    Set<String> keys = top.keys();
    if (cache != null) {
      List<String> lru = cache.lruOrder();
      if (new HashSet<>(lru).size() != lru.size()) {
        v.add("LRU order has duplicates: " + lru);
      }
      if (!new HashSet<>(lru).equals(keys)) {
        v.add("LRU order " + lru + " differs from the registered set " + keys);
      }
      if (keys.size() > cache.options().maxSize()) {
        v.add("count budget exceeded: " + keys.size() + " > " + cache.options().maxSize());
      }
      if (cache.usedSlots() != keys.size()) {
        v.add("budget holds " + cache.usedSlots() + " slots for " + keys.size() + " models");
      }
    }
    for (TestModel m : registry.created()) {
      v.addAll(m.violations());
      boolean registered = keys.contains(m.id) && top.get(m.id) == m;
      if (registered && m.clears() != 0) {
        v.add("registered model " + m + " was cleared " + m.clears() + " time(s)");
      }
      if (!registered && m.clears() != 1) {
        v.add("model " + m + " left the manager but was cleared " + m.clears() + " time(s)");
      }
    }
    if (base != null) {
      Set<String> table = base.lifecycleTable();
      Set<String> stale = new HashSet<>(table);
      stale.removeAll(base.keys());
      if (!stale.isEmpty()) {
        v.add("lifecycle table holds unused entries " + stale);
      }
    }
    return v;
  }

  /**
   * Everything {@link #check} verifies, plus what must hold once every caller has left: no lease is
   * open, no identifier is stuck in a transition, the budget was never exceeded (resident plus
   * loading models, counted by the registry's monitor at every construction and clear) and its byte
   * count matches the registered models. The byte high-water mark is compared only when {@code
   * exactSizes} says that the models' actual sizes equal their predictions (a larger actual size
   * may overshoot until the budget trims).
   */
  public static List<String> checkQuiescent(
      ModelManager top,
      BaseModelManager base,
      WithFixedSizeCache cache,
      TestRegistry registry,
      boolean exactSizes) {
    List<String> v = check(top, base, cache, registry);
    long leases = top.stats().activeLeases();
    if (leases != 0) {
      v.add(leases + " lease(s) still open after every caller left");
    }
    Set<String> keys = top.keys();
    Set<String> described = new HashSet<>();
    for (ModelDescription d : top.describeModels()) {
      described.add(d.modelId());
      if (d.state() != ModelState.READY) {
        v.add("'" + d.modelId() + "' is stuck in " + d.state() + " after every caller left");
      }
      if (d.leases() != 0) {
        v.add("'" + d.modelId() + "' still has " + d.leases() + " open lease(s)");
      }
    }
    if (!described.equals(keys)) {
      v.add("described models " + described + " differ from the registered set " + keys);
    }
    if (top.size() != keys.size()) {
      v.add("size() " + top.size() + " differs from keys() " + keys);
    }
    long registeredBytes = 0;
    for (TestModel m : registry.created()) {
      if (keys.contains(m.id) && top.get(m.id) == m) {
        registeredBytes += Math.max(0, m.sizeBytes());
      }
    }
    LifecycleMonitor monitor = registry.monitor();
    if (monitor.live() != countRegistered(top, registry)) {
      v.add(
          monitor.live()
              + " models alive (not cleared) but "
              + countRegistered(top, registry)
              + " registered");
    }
    if (cache != null) {
      int maxSize = cache.options().maxSize();
      if (monitor.peakLive() > maxSize) {
        v.add(
            "count budget exceeded in flight: "
                + monitor.peakLive()
                + " models alive at once > "
                + maxSize);
      }
      long maxBytes = cache.options().maxBytes();
      if (exactSizes && maxBytes > 0 && monitor.peakLiveBytes() > maxBytes) {
        v.add(
            "byte budget exceeded in flight: "
                + monitor.peakLiveBytes()
                + " bytes alive at once > "
                + maxBytes);
      }
      if (exactSizes && cache.usedBytes() != registeredBytes) {
        v.add(
            "budget counts "
                + cache.usedBytes()
                + " bytes for registered models of "
                + registeredBytes);
      }
    }
    return v;
  }

  private static int countRegistered(ModelManager top, TestRegistry registry) {
    Set<String> keys = top.keys();
    int n = 0;
    for (TestModel m : registry.created()) {
      if (keys.contains(m.id) && top.get(m.id) == m) {
        n++;
      }
    }
    return n;
  }
}
