package dev.modelkeeper.onnx.memory;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * Measures what loads and runs cost by sampling the process's RSS around them. Thread-safe;
 * process-wide, as RSS is.
 *
 * <p>A measurement is only clean when nothing else that allocates native memory ran beside it: so
 * every load and every run is counted here (runs on striped counters, so the inference path writes
 * no word shared by all threads), and a probe records whether another load or run started or was in
 * progress while it was open. Nothing is serialized to get a clean figure: concurrent loads stay
 * concurrent, and a figure taken in company is reported as not clean for the caller to discard.
 *
 * <p>The peak of a probe comes from one daemon thread that samples RSS every millisecond while any
 * probe is open and sleeps otherwise.
 */
public final class MemoryMeter {

  private static final long SAMPLE_NANOS = 1_000_000;

  private static final AtomicInteger ACTIVE_LOADS = new AtomicInteger();
  private static final AtomicLong LOADS_STARTED = new AtomicLong();
  private static final LongAdder ACTIVE_RUNS = new LongAdder();
  private static final LongAdder RUNS_STARTED = new LongAdder();
  private static final AtomicLong TRIMS = new AtomicLong();
  private static final Set<Probe> OPEN = ConcurrentHashMap.newKeySet();
  private static final Thread SAMPLER = sampler();

  private MemoryMeter() {}

  /** Opens a probe around a load; close it with {@link Probe#end()} in a finally block. */
  public static Probe startLoad() {
    ACTIVE_LOADS.incrementAndGet();
    LOADS_STARTED.incrementAndGet();
    return open(true);
  }

  /**
   * Counts an unload (a session closing) while it runs: loads measured meanwhile are not clean.
   * Call {@link #unloadEnded()} in a finally block.
   */
  public static void unloadStarted() {
    ACTIVE_LOADS.incrementAndGet();
    LOADS_STARTED.incrementAndGet();
  }

  /** Ends an unload counted by {@link #unloadStarted()}. */
  public static void unloadEnded() {
    ACTIVE_LOADS.decrementAndGet();
  }

  /** Counts a trim of the native heap, which lowers RSS: probes open meanwhile are not clean. */
  public static void nativeHeapTrimmed() {
    TRIMS.incrementAndGet();
  }

  /**
   * Counts a run that is not measured; call {@link #runEnded()} when it ends. Cheap: two striped
   * counter updates.
   */
  public static void runStarted() {
    ACTIVE_RUNS.increment();
    RUNS_STARTED.increment();
  }

  /** Ends a run counted by {@link #runStarted()}. */
  public static void runEnded() {
    ACTIVE_RUNS.decrement();
  }

  /**
   * Opens a probe around a run when nothing else is running or loading now (else returns null and
   * counts nothing: the figure could not be clean). Close it with {@link Probe#end()}.
   */
  public static Probe startRunIfAlone() {
    if (ACTIVE_LOADS.get() != 0 || ACTIVE_RUNS.sum() != 0 || ProcessMemory.residentBytes() < 0) {
      return null;
    }
    runStarted();
    return open(false);
  }

  private static Probe open(boolean load) {
    Probe p = new Probe(load);
    OPEN.add(p);
    LockSupport.unpark(SAMPLER);
    return p;
  }

  private static Thread sampler() {
    Thread t =
        new Thread(
            () -> {
              while (true) {
                if (OPEN.isEmpty()) {
                  LockSupport.park();
                  continue;
                }
                long rss = ProcessMemory.residentBytes();
                for (Probe p : OPEN) {
                  p.see(rss);
                }
                LockSupport.parkNanos(SAMPLE_NANOS);
              }
            },
            "modelkeeper-memory-sampler");
    t.setDaemon(true);
    t.start();
    return t;
  }

  /** One measurement in progress; used by one thread. */
  public static final class Probe {
    private final boolean load;
    private final long before;
    private final long loadsSeen;
    private final long runsSeen;
    private final long trimsSeen;
    private int ownTrims;
    private final boolean aloneAtStart;
    private final AtomicLong peak;

    private Probe(boolean load) {
      this.load = load;
      this.loadsSeen = LOADS_STARTED.get();
      this.runsSeen = RUNS_STARTED.sum();
      this.trimsSeen = TRIMS.get();
      this.aloneAtStart =
          ACTIVE_LOADS.get() == (load ? 1 : 0) && ACTIVE_RUNS.sum() == (load ? 0 : 1);
      this.before = ProcessMemory.residentBytes();
      this.peak = new AtomicLong(before);
    }

    void see(long rss) {
      peak.accumulateAndGet(rss, Math::max);
    }

    /**
     * Runs {@code trim} (a native-heap trim) as part of this operation, so that its effect on RSS
     * counts as the operation's own; on the probe's thread.
     */
    public void trimHere(Runnable trim) {
      ownTrims++;
      trim.run();
    }

    /** Closes the probe and returns what it saw; call once. */
    public Reading end() {
      long after = ProcessMemory.residentBytes();
      see(after);
      OPEN.remove(this);
      boolean clean =
          aloneAtStart
              && before >= 0
              && LOADS_STARTED.get() == loadsSeen
              && RUNS_STARTED.sum() == runsSeen
              && TRIMS.get() == trimsSeen + ownTrims;
      if (load) {
        ACTIVE_LOADS.decrementAndGet();
      } else {
        runEnded();
      }
      return new Reading(before, peak.get(), after, clean);
    }
  }

  /**
   * What a probe saw, in bytes of RSS.
   *
   * @param clean whether no other load or run overlapped the probe, so the differences are this
   *     operation's own
   */
  public record Reading(long before, long peak, long after, boolean clean) {

    /** The most the process held above {@link #before} during the operation. */
    public long peakDelta() {
      return Math.max(0, peak - before);
    }

    /** What the process still held above {@link #before} when the operation ended. */
    public long afterDelta() {
      return Math.max(0, after - before);
    }
  }
}
