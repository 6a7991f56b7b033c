package dev.modelkeeper.benchmarks;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLongArray;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Diagnosis, not a published figure ({@code benchmarks.jar diagnose}): the hot path of a lease
 * taken apart. Each method adds or removes one ingredient of {@code BaseModelManager}'s lease (map
 * read, CAS'd lease word, ticker read, shared recency write, lease allocation with a CAS'd close
 * flag) on structures that mimic it, so the cost of each ingredient shows as a difference. The
 * replica structures are shared by the benchmark threads; they are thread-safe the way the core's
 * are.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class LeaseCostBenchmark {

  private static final long STALE_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
  private static final int STRIPES = 8;
  private static final int PAD = 16;

  /** A stand-in for the core's lifecycle entry: a lease word, a recency stamp and a model. */
  static final class Entry {
    final AtomicInteger word = new AtomicInteger();
    final AtomicLongArray striped = new AtomicLongArray(STRIPES * PAD);
    final Object model = new Object();
    volatile long lastUsed;
  }

  /** A stand-in for the core's lease: one allocation with a CAS'd closed flag. */
  static final class Handle {
    static final AtomicIntegerFieldUpdater<Handle> CLOSED =
        AtomicIntegerFieldUpdater.newUpdater(Handle.class, "closed");
    final Entry entry;
    volatile int closed;

    Handle(Entry entry) {
      this.entry = entry;
    }

    void close() {
      if (CLOSED.compareAndSet(this, 0, 1)) {
        entry.word.decrementAndGet();
      }
    }
  }

  /**
   * A lease whose close is idempotent through a plain field (a lease is used by one thread), so
   * that C2's escape analysis can remove the allocation once acquire and close are inlined.
   */
  static final class PlainHandle {
    final Entry entry;
    boolean closed;

    PlainHandle(Entry entry) {
      this.entry = entry;
    }

    void close() {
      if (!closed) {
        closed = true;
        entry.word.decrementAndGet();
      }
    }
  }

  private final ConcurrentHashMap<String, Entry> map = new ConcurrentHashMap<>();

  @Setup
  public void setUp() {
    for (String id : HotPathBenchmark.ids()) {
      map.put(id, new Entry());
    }
  }

  private static void lease(Entry e) {
    for (; ; ) {
      int w = e.word.get();
      if (w < 0) {
        throw new IllegalStateException("closed");
      }
      if (e.word.compareAndSet(w, w + 1)) {
        return;
      }
    }
  }

  private static int stripe() {
    return (int) (Thread.currentThread().getId() % STRIPES) * PAD;
  }

  @Benchmark
  public void a_mapGet(HotPathBenchmark.Keys k, Blackhole bh) {
    bh.consume(map.get(k.next()).model);
  }

  @Benchmark
  public void b_nanoTimeOnly(Blackhole bh) {
    bh.consume(System.nanoTime());
  }

  @Benchmark
  public void c_mapGet_leaseWord(HotPathBenchmark.Keys k, Blackhole bh) {
    Entry e = map.get(k.next());
    lease(e);
    bh.consume(e.model);
    e.word.decrementAndGet();
  }

  @Benchmark
  public void d_plusNanoTimeStamp(HotPathBenchmark.Keys k, Blackhole bh) {
    Entry e = map.get(k.next());
    lease(e);
    e.lastUsed = System.nanoTime();
    bh.consume(e.model);
    e.word.decrementAndGet();
  }

  @Benchmark
  public void e_plusHandle_likeCore(HotPathBenchmark.Keys k, Blackhole bh) {
    Entry e = map.get(k.next());
    lease(e);
    e.lastUsed = System.nanoTime();
    Handle h = new Handle(e);
    bh.consume(e.model);
    h.close();
  }

  @Benchmark
  public void f_likeCore_stampOnlyWhenStale(HotPathBenchmark.Keys k, Blackhole bh) {
    Entry e = map.get(k.next());
    lease(e);
    long now = System.nanoTime();
    if (now - e.lastUsed > STALE_NANOS) {
      e.lastUsed = now;
    }
    Handle h = new Handle(e);
    bh.consume(e.model);
    h.close();
  }

  @Benchmark
  public void g_likeCore_noStamp(HotPathBenchmark.Keys k, Blackhole bh) {
    Entry e = map.get(k.next());
    lease(e);
    Handle h = new Handle(e);
    bh.consume(e.model);
    h.close();
  }

  @Benchmark
  public void h_stripedCount_noStamp_noHandle(HotPathBenchmark.Keys k, Blackhole bh) {
    Entry e = map.get(k.next());
    int s = stripe();
    e.striped.getAndIncrement(s);
    bh.consume(e.model);
    e.striped.getAndDecrement(s);
  }

  @Benchmark
  public void i_likeCore_plainHandle(HotPathBenchmark.Keys k, Blackhole bh) {
    Entry e = map.get(k.next());
    lease(e);
    e.lastUsed = System.nanoTime();
    PlainHandle h = new PlainHandle(e);
    bh.consume(e.model);
    h.close();
  }

  @Benchmark
  public void j_plainHandle_noStamp(HotPathBenchmark.Keys k, Blackhole bh) {
    Entry e = map.get(k.next());
    lease(e);
    PlainHandle h = new PlainHandle(e);
    bh.consume(e.model);
    h.close();
  }
}
