package dev.modelkeeper.benchmarks;

import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.LoadingCache;
import dev.modelkeeper.benchmarks.FakeWorld.FakeModel;
import dev.modelkeeper.core.BaseModelManager;
import dev.modelkeeper.core.ModelLease;
import dev.modelkeeper.core.ModelManager;
import dev.modelkeeper.core.WithFixedSizeCache;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One design under test, behind the calls its users make for one request. Implementations are
 * thread-safe: the harnesses call {@link #serve} from many threads at once.
 */
interface Design {

  /** The name printed in the tables. */
  String name();

  /**
   * Serves one request for {@code id} the design's way and runs {@code workNanos} of work on the
   * model. Returns false when the model was cleared before or during the work; throws when the
   * design could not hand out the model.
   */
  boolean serve(String id, long workNanos);

  String MODELKEEPER = "ModelKeeper";
  String CAFFEINE = "Caffeine";
  String ONE_LOCK = "One-lock LRU (seed)";
  String FLOOR = "Floor: one future per key";

  /** {@code WithFixedSizeCache(BaseModelManager)}: acquire a lease, work, close it. */
  static Design modelKeeper(FakeWorld world, int budget) {
    ModelManager manager = new WithFixedSizeCache(new BaseModelManager(world), budget);
    return new Design() {
      @Override
      public String name() {
        return MODELKEEPER;
      }

      @Override
      public boolean serve(String id, long workNanos) {
        try (ModelLease lease = manager.acquire(id, null)) {
          return ((FakeModel) lease.model()).work(workNanos);
        }
      }
    };
  }

  /**
   * A Caffeine {@code LoadingCache} bounded by {@code maximumSize}, with a removal listener that
   * clears the model (what a Java user would write): {@code get(k, loader)}, then work.
   */
  static Design caffeine(FakeWorld world, int budget) {
    LoadingCache<String, FakeModel> cache =
        Caffeine.newBuilder()
            .maximumSize(budget)
            .<String, FakeModel>removalListener((id, model, cause) -> model.clearCache())
            .build(world::create);
    return new Design() {
      @Override
      public String name() {
        return CAFFEINE;
      }

      @Override
      public boolean serve(String id, long workNanos) {
        return cache.get(id, world::create).work(workNanos);
      }
    };
  }

  /** The seed's decorator used the seed's way: {@code addModel}, then {@code get}, then work. */
  static Design oneLock(FakeWorld world, int budget) {
    OneLockLru lru = new OneLockLru(world, budget);
    return new Design() {
      @Override
      public String name() {
        return ONE_LOCK;
      }

      @Override
      public boolean serve(String id, long workNanos) {
        lru.addModel(id);
        return ((FakeModel) lru.get(id)).work(workNanos);
      }
    };
  }

  /**
   * Not a cache: the least coordination a single-flight load needs (one {@code CompletableFuture}
   * per key, the loader completes it, everyone else joins it). Shows what waking the waiters costs
   * on this machine, under every design.
   */
  static Design floor(FakeWorld world, int budget) {
    ConcurrentHashMap<String, CompletableFuture<FakeModel>> futures = new ConcurrentHashMap<>();
    return new Design() {
      @Override
      public String name() {
        return FLOOR;
      }

      @Override
      public boolean serve(String id, long workNanos) {
        CompletableFuture<FakeModel> mine = new CompletableFuture<>();
        CompletableFuture<FakeModel> f = futures.putIfAbsent(id, mine);
        if (f == null) {
          mine.complete(world.create(id));
          f = mine;
        }
        return f.join().work(workNanos);
      }
    };
  }
}
