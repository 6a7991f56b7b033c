package dev.modelkeeper.benchmarks;

import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.LoadingCache;
import dev.modelkeeper.benchmarks.FakeWorld.FakeModel;
import dev.modelkeeper.core.BaseModelManager;
import dev.modelkeeper.core.Model;
import dev.modelkeeper.core.ModelLease;
import dev.modelkeeper.core.ModelManager;
import dev.modelkeeper.core.WithFixedSizeCache;
import java.util.Arrays;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.infra.Blackhole;
import org.openjdk.jmh.infra.ThreadParams;

/**
 * The hot path: look up (and for ModelKeeper lease and release) one of {@value #MODELS} resident
 * models, against the baselines. Thread-safe: every structure is shared by the benchmark threads
 * (that sharing is what is measured), while JMH confines each {@link Keys} to one thread.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class HotPathBenchmark {

  /** Resident models; every structure holds exactly these and has room for them. */
  static final int MODELS = 64;

  /** Length of each thread's precomputed key sequence (a power of two). */
  static final int SEQUENCE = 1 << 16;

  /** The exponent of the key popularity (YCSB's default). */
  static final double ZIPF_EXPONENT = 0.99;

  private ModelManager budgeted;
  private BaseModelManager base;
  private ConcurrentHashMap<String, Model> map;
  private LoadingCache<String, Model> caffeine;
  private OneLockLru oneLock;

  static String[] ids() {
    String[] ids = new String[MODELS];
    for (int i = 0; i < MODELS; i++) {
      ids[i] = "model-" + i;
    }
    return ids;
  }

  @Setup
  public void setUp() {
    String[] ids = ids();
    FakeWorld world = new FakeWorld(0);
    base = new BaseModelManager(world);
    budgeted = new WithFixedSizeCache(new BaseModelManager(world), MODELS);
    map = new ConcurrentHashMap<>();
    caffeine =
        Caffeine.newBuilder()
            .maximumSize(MODELS)
            .<String, Model>removalListener((k, m, cause) -> ((FakeModel) m).clearCache())
            .build(world::create);
    oneLock = new OneLockLru(world, MODELS);
    for (String id : ids) {
      base.acquire(id, null).close();
      budgeted.acquire(id, null).close();
      FakeModel m = world.create(id);
      map.put(id, m);
      caffeine.put(id, m);
      oneLock.put(id, m);
    }
    if (budgeted.size() != MODELS || base.size() != MODELS || caffeine.estimatedSize() != MODELS) {
      throw new IllegalStateException("the resident set is not complete");
    }
  }

  /**
   * One benchmark thread's keys: a constant, or its own Zipf sequence. Not thread-safe: JMH
   * confines it to one thread.
   */
  @State(Scope.Thread)
  public static class Keys {

    /** {@code same}: every call asks for one model; {@code zipf}: Zipf-spread over all of them. */
    @Param({"same", "zipf"})
    public String keys;

    private String[] sequence;
    private int next;

    @Setup
    public void setUp(ThreadParams thread) {
      String[] ids = ids();
      if ("same".equals(keys)) {
        sequence = new String[SEQUENCE];
        Arrays.fill(sequence, ids[0]);
      } else if ("zipf".equals(keys)) {
        sequence =
            new Zipf(MODELS, ZIPF_EXPONENT).keys(ids, SEQUENCE, 1_000L + thread.getThreadIndex());
      } else {
        throw new IllegalArgumentException("keys must be same or zipf, was " + keys);
      }
    }

    String next() {
      return sequence[next++ & (SEQUENCE - 1)];
    }
  }

  @Benchmark
  public void modelKeeper(Keys k, Blackhole bh) {
    try (ModelLease l = budgeted.acquire(k.next(), null)) {
      bh.consume(l.model());
    }
  }

  @Benchmark
  public void modelKeeperBase(Keys k, Blackhole bh) {
    try (ModelLease l = base.acquire(k.next(), null)) {
      bh.consume(l.model());
    }
  }

  @Benchmark
  public void concurrentHashMap(Keys k, Blackhole bh) {
    bh.consume(map.get(k.next()));
  }

  @Benchmark
  public void caffeine(Keys k, Blackhole bh) {
    bh.consume(caffeine.getIfPresent(k.next()));
  }

  @Benchmark
  public void oneLockLru(Keys k, Blackhole bh) {
    bh.consume(oneLock.get(k.next()));
  }
}
