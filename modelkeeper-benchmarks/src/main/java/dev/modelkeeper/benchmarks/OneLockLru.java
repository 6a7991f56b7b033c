package dev.modelkeeper.benchmarks;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.modelkeeper.core.Model;
import dev.modelkeeper.core.ModelLoadException;
import dev.modelkeeper.core.ModelNotLoadedException;
import dev.modelkeeper.core.ModelRegistry;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The design ModelKeeper replaces, kept as a baseline: one LRU decorator whose single lock guards
 * an access-order {@link LinkedHashMap} and is held across every load and every eviction, used the
 * old way ({@code addModel}, then {@code get}, no lease). Thread-safe: every method takes the one
 * lock, which is exactly what makes it slow and what lets a {@code get} after another caller's
 * eviction fail.
 */
final class OneLockLru {

  private final ModelRegistry registry;
  private final int maxSize;

  /** Access order: iteration starts at the least recently used. */
  @GuardedBy("this")
  private final LinkedHashMap<String, Model> models = new LinkedHashMap<>(16, 0.75f, true);

  OneLockLru(ModelRegistry registry, int maxSize) {
    if (maxSize < 1) {
      throw new IllegalArgumentException("maxSize must be at least 1, was " + maxSize);
    }
    this.registry = registry;
    this.maxSize = maxSize;
  }

  /**
   * Loads {@code id} unless resident, evicting least recently used models first; the lock is held
   * throughout.
   */
  synchronized void addModel(String id) {
    if (models.get(id) != null) {
      return; // the get moved it to the most recently used end
    }
    Iterator<Map.Entry<String, Model>> eldest = models.entrySet().iterator();
    while (models.size() >= maxSize && eldest.hasNext()) {
      Model victim = eldest.next().getValue();
      eldest.remove();
      clear(victim);
    }
    Model m;
    try {
      m = registry.getModel(id, null).create(id, null);
    } catch (Exception e) {
      throw new ModelLoadException("loading '" + id + "' failed", e);
    }
    models.put(id, m);
  }

  /** The resident model, moved to the most recently used end; throws when it is not loaded. */
  synchronized Model get(String id) {
    Model m = models.get(id);
    if (m == null) {
      throw new ModelNotLoadedException("model '" + id + "' is not loaded");
    }
    return m;
  }

  /** Installs a model without loading (for the hot path's resident set). */
  synchronized void put(String id, Model m) {
    models.put(id, m);
  }

  synchronized int size() {
    return models.size();
  }

  private static void clear(Model m) {
    try {
      m.clearCache();
    } catch (Exception e) {
      throw new IllegalStateException("clearCache() failed", e);
    }
  }
}
