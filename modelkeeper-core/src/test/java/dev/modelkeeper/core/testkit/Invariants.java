package dev.modelkeeper.core.testkit;

import dev.modelkeeper.core.BaseModelManager;
import dev.modelkeeper.core.ModelManager;
import dev.modelkeeper.core.WithFixedSizeCache;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Checks the architecture's invariants on a quiescent manager: call it only after every thread
 * that used the manager has been joined. Returns the violations found (empty when all hold).
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
}
