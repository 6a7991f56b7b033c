package dev.modelkeeper.server.memory;

import static java.lang.System.Logger.Level.INFO;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.modelkeeper.core.WithFixedSizeCache;
import dev.modelkeeper.onnx.NativeHeap;
import dev.modelkeeper.onnx.memory.MemoryMeter;
import dev.modelkeeper.onnx.memory.ProcessMemory;
import dev.modelkeeper.server.config.InvalidConfigException;
import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Keeps the process under its {@link MemoryCap}. Thread-safe: its state is written by one sampling
 * task and read by metrics.
 *
 * <p>The cap is split once, at start: the JVM's part (the maximum heap, plus what the process holds
 * beyond the heap now, plus room for that to grow) and the rest, which becomes the byte budget of
 * models and runs (each model charged its measured cost, each run its working memory). Every 100 ms
 * the guard reads the process's RSS and compares it with what is accounted for. Memory that nothing
 * accounts for (a native allocator keeping freed blocks, input buffers awaiting a GC, a model
 * costing more than charged) is first handed back to the system with a GC and a native-heap trim
 * (at most once a second); what remains, once the process nears the cap, is set aside in the budget
 * as outside bytes, which evicts idle models. It is released again, after five seconds below it, as
 * the excess goes away.
 */
public final class MemoryGuard implements AutoCloseable {

  private static final System.Logger LOG = System.getLogger(MemoryGuard.class.getName());

  /** Room for the JVM outside the heap to grow after start: code, classes, threads, buffers. */
  static final long NON_HEAP_GROWTH_BYTES = 96L << 20;

  /** The least the JVM outside the heap is assumed to take. */
  static final long NON_HEAP_FLOOR_BYTES = 64L << 20;

  /** The least room left for models, or the cap is refused. */
  static final long MIN_MODEL_ROOM_BYTES = 32L << 20;

  static final long PERIOD_MILLIS = 100;

  /** Excess readings remembered: five seconds of samples. */
  private static final int WINDOW = 50;

  private static final long TRIM_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);

  private final MemoryCap cap;
  private final long jvmBytes;

  @GuardedBy("this")
  private final long[] excess = new long[WINDOW];

  @GuardedBy("this")
  private int next;

  /** Native-heap trims seen by the last sample: a trim since makes the window stale. */
  @GuardedBy("this")
  private long trimsSeen = MemoryMeter.trims();

  /** Set while a sample runs on its thread: a trim it makes does not start another sample. */
  private final ThreadLocal<Boolean> sampling = ThreadLocal.withInitial(() -> false);

  @GuardedBy("this")
  private long lastTrimNanos = System.nanoTime() - TRIM_INTERVAL_NANOS;

  private volatile long residentBytes = -1;
  private volatile WithFixedSizeCache budget;
  private volatile ScheduledFuture<?> task;

  private MemoryGuard(MemoryCap cap, long jvmBytes) {
    this.cap = cap;
    this.jvmBytes = jvmBytes;
  }

  /**
   * Splits {@code cap} into the JVM's part and the models' part, from the heap's maximum and the
   * process's RSS now.
   *
   * @throws InvalidConfigException naming {@code max-memory} when the cap leaves models no room
   */
  public static MemoryGuard split(MemoryCap cap) {
    long heapMax = Runtime.getRuntime().maxMemory();
    long heapCommitted = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getCommitted();
    long rss = ProcessMemory.residentBytes();
    long nonHeap = Math.max(NON_HEAP_FLOOR_BYTES, rss - heapCommitted) + NON_HEAP_GROWTH_BYTES;
    long jvm = heapMax + nonHeap;
    if (cap.bytes() - jvm < MIN_MODEL_ROOM_BYTES) {
      throw new InvalidConfigException(
          "max-memory",
          MemoryCap.format(cap.bytes())
              + " ("
              + cap.source()
              + ") leaves no room for models: the JVM may take "
              + MemoryCap.format(jvm)
              + " (a heap of up to "
              + MemoryCap.format(heapMax)
              + ", set with -Xmx, and "
              + MemoryCap.format(nonHeap)
              + " beside it); raise the cap or lower -Xmx");
    }
    return new MemoryGuard(cap, jvm);
  }

  public MemoryCap cap() {
    return cap;
  }

  /** The JVM's part of the cap, set aside at start. */
  public long jvmBytes() {
    return jvmBytes;
  }

  /** The rest of the cap: the byte budget of models and runs. */
  public long modelBytes() {
    return cap.bytes() - jvmBytes;
  }

  /** The process's RSS at the last sample, or -1 before the first (or off Linux). */
  public long residentBytes() {
    return residentBytes;
  }

  /** Starts sampling every 100 ms on {@code scheduler}, adjusting {@code budget}. */
  public void start(WithFixedSizeCache budget, ScheduledExecutorService scheduler) {
    this.budget = budget;
    this.residentBytes = ProcessMemory.residentBytes();
    this.task =
        scheduler.scheduleWithFixedDelay(
            this::sampleQuietly, PERIOD_MILLIS, PERIOD_MILLIS, TimeUnit.MILLISECONDS);
    // memory handed back (a refused model's, say) is seen at once, before the next request
    MemoryMeter.afterTrims(this::afterTrim);
  }

  private void afterTrim() {
    if (!sampling.get()) {
      sampleQuietly();
    }
  }

  private void sampleQuietly() {
    try {
      sample();
    } catch (RuntimeException e) {
      LOG.log(INFO, "memory sample skipped: " + e);
    }
  }

  /**
   * One sample; on the scheduler's thread, or on a thread that has just trimmed the native heap.
   * After a trim, the excess remembered from before it is forgotten: the memory it stood for may
   * have gone back to the system.
   */
  synchronized void sample() {
    sampling.set(true);
    try {
      sampleLocked();
    } finally {
      sampling.set(false);
    }
  }

  @GuardedBy("this")
  private void sampleLocked() {
    WithFixedSizeCache b = budget;
    long rss = ProcessMemory.residentBytes();
    residentBytes = rss;
    if (b == null || rss < 0) {
      return;
    }
    long trims = MemoryMeter.trims();
    if (trims != trimsSeen) {
      trimsSeen = trims;
      Arrays.fill(excess, 0);
    }
    long accounted = jvmBytes + b.usedBytes() + b.workingBytes();
    long unaccounted = Math.max(0, rss - accounted);
    boolean near = rss > cap.bytes() - cap.bytes() / 16;
    // not while a load is measured in a quiet window: its reading would fall by what this frees;
    // the next sample, 100 ms later, tries again
    if (unaccounted > 0
        && near
        && System.nanoTime() - lastTrimNanos >= TRIM_INTERVAL_NANOS
        && !MemoryMeter.quietElsewhere()) {
      lastTrimNanos = System.nanoTime();
      // ONNX Runtime's Java API copies inputs into direct buffers that only a GC frees: collect
      // them, then hand the allocator's free memory back
      System.gc();
      NativeHeap.trim();
      trimsSeen = MemoryMeter.trims(); // its own trim keeps the window: what remains is read now
      rss = ProcessMemory.residentBytes();
      residentBytes = rss;
      unaccounted = Math.max(0, rss - accounted);
    }
    excess[next] = near ? unaccounted : 0;
    next = (next + 1) % WINDOW;
    long keep = 0;
    for (long e : excess) {
      keep = Math.max(keep, e);
    }
    long current = b.outsideBytes();
    if (Math.abs(keep - current) >= (1L << 20)) {
      if (current == 0) {
        LOG.log(
            INFO,
            "process memory "
                + MemoryCap.format(rss)
                + " is "
                + MemoryCap.format(unaccounted)
                + " above what is accounted for; setting that aside, evicting idle models");
      }
      b.setOutsideBytes(keep);
    }
  }

  @Override
  public void close() {
    ScheduledFuture<?> t = task;
    if (t != null) {
      t.cancel(false);
      MemoryMeter.afterTrims(null);
    }
  }
}
