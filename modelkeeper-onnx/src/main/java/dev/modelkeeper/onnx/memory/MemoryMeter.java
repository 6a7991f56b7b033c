package dev.modelkeeper.onnx.memory;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
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
 * <p>A reading taken in company can still bound a load from below: unloads and native-heap trims
 * only lower RSS, and runs only add what they reserved as working memory ({@link #working}), so
 * when no other load started, the peak less the most that other runs had reserved is memory this
 * load took ({@link Reading#peakLowerBound()}). A load that crossed the memory cap is learned from
 * that at once, whatever else ran.
 *
 * <p>Under churn nothing is ever alone: runs, unloads and other loads overlap every load, and a
 * model whose cost is still unknown would be charged its estimate forever. So a load that is to be
 * measured asks for a quiet window first ({@link #quiet}): while it holds one, loads, runs, unloads
 * and trims of the native heap that start on other threads wait for it to end (at most {@link
 * #YIELD_MAX_NANOS}), and the window opens once those in progress have drained. Only the measuring
 * part of the load is serialized: its session creation, not its warm-up; and only once per model,
 * as the figure is kept. A window that cannot drain within its wait opens nothing, and the load is
 * measured in company as before. Waiting for a window costs the request path one volatile read.
 *
 * <p>The peak of a probe comes from one daemon thread that samples RSS every millisecond while any
 * probe is open and sleeps otherwise.
 */
public final class MemoryMeter {

  private static final long SAMPLE_NANOS = 1_000_000;

  private static final AtomicInteger ACTIVE_LOADS = new AtomicInteger();
  private static final AtomicLong LOADS_STARTED = new AtomicLong();
  private static final AtomicInteger ACTIVE_UNLOADS = new AtomicInteger();
  private static final AtomicLong UNLOADS_STARTED = new AtomicLong();
  private static final AtomicLong WORKING_BYTES = new AtomicLong();
  private static final LongAdder ACTIVE_RUNS = new LongAdder();
  private static final LongAdder RUNS_STARTED = new LongAdder();
  private static final AtomicLong TRIMS = new AtomicLong();
  private static final Set<Probe> OPEN = ConcurrentHashMap.newKeySet();
  private static final Thread SAMPLER = sampler();

  /** The longest anything waits for another thread's quiet window to end before it goes on. */
  static final long YIELD_MAX_NANOS = TimeUnit.SECONDS.toNanos(10);

  /** The thread that holds the quiet window, or null; see {@link #quiet}. */
  private static volatile Thread quietFor;

  /** Guards handing the quiet window over; its monitor wakes those that yield to it. */
  private static final Object QUIET = new Object();

  private MemoryMeter() {}

  /** Opens a probe around a load; close it with {@link Probe#end()} in a finally block. */
  public static Probe startLoad() {
    ACTIVE_LOADS.incrementAndGet();
    if (quietFor != null) {
      yieldToQuiet(ACTIVE_LOADS::incrementAndGet, ACTIVE_LOADS::decrementAndGet);
    }
    LOADS_STARTED.incrementAndGet();
    return open(true);
  }

  /**
   * Opens a quiet window for a load on this thread, waiting at most {@code maxWaitNanos} for
   * another window to end and for the loads, runs and unloads in progress to drain; see the class
   * comment. Close it (idempotent) as soon as the measured part of the load has ended, in a finally
   * block. When the window could not open, {@link Quiet#opened()} is false and closing it does
   * nothing.
   */
  public static Quiet quiet(long maxWaitNanos) {
    Thread me = Thread.currentThread();
    long deadline = System.nanoTime() + maxWaitNanos;
    synchronized (QUIET) {
      while (quietFor != null) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return Quiet.NOT_OPENED;
        }
        try {
          TimeUnit.NANOSECONDS.timedWait(QUIET, left);
        } catch (InterruptedException e) {
          me.interrupt();
          return Quiet.NOT_OPENED;
        }
      }
      quietFor = me;
    }
    Quiet window = new Quiet();
    while (ACTIVE_LOADS.get() != 0 || ACTIVE_UNLOADS.get() != 0 || ACTIVE_RUNS.sum() != 0) {
      if (System.nanoTime() - deadline > 0 || me.isInterrupted()) {
        window.close();
        return Quiet.NOT_OPENED;
      }
      LockSupport.parkNanos(SAMPLE_NANOS); // polling the drain of what was in progress
    }
    return window;
  }

  /** Whether another thread holds a quiet window now (a trim or GC may wait for a later moment). */
  public static boolean quietElsewhere() {
    Thread q = quietFor;
    return q != null && q != Thread.currentThread();
  }

  /**
   * Waits, at most {@link #YIELD_MAX_NANOS}, while another thread holds a quiet window, uncounting
   * this thread's operation ({@code leave}) meanwhile and counting it again ({@code enter}) after.
   */
  private static void yieldToQuiet(Runnable enter, Runnable leave) {
    long deadline = System.nanoTime() + YIELD_MAX_NANOS;
    while (quietElsewhere()) {
      leave.run();
      boolean ended = awaitQuietEnd(deadline);
      enter.run();
      if (!ended) {
        return; // the window outlived the wait: go on, and its figure is not clean
      }
    }
  }

  /** Waits until no other thread holds a quiet window; false when the deadline came first. */
  private static boolean awaitQuietEnd(long deadline) {
    synchronized (QUIET) {
      while (quietElsewhere()) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        try {
          TimeUnit.NANOSECONDS.timedWait(QUIET, left);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return false;
        }
      }
      return true;
    }
  }

  /** A quiet window held by one thread; see {@link #quiet}. */
  public static final class Quiet implements AutoCloseable {
    static final Quiet NOT_OPENED = new Quiet();

    private Quiet() {}

    /** Whether the window opened: nothing else loads, runs, unloads or trims until it closes. */
    public boolean opened() {
      return this != NOT_OPENED;
    }

    @Override
    public void close() {
      if (this == NOT_OPENED) {
        return;
      }
      synchronized (QUIET) {
        if (quietFor == Thread.currentThread()) {
          quietFor = null;
          QUIET.notifyAll();
        }
      }
    }
  }

  /**
   * Counts an unload (a session closing) while it runs: loads measured meanwhile are not clean.
   * Call {@link #unloadEnded()} in a finally block.
   */
  public static void unloadStarted() {
    ACTIVE_UNLOADS.incrementAndGet();
    if (quietFor != null) {
      yieldToQuiet(ACTIVE_UNLOADS::incrementAndGet, ACTIVE_UNLOADS::decrementAndGet);
    }
    UNLOADS_STARTED.incrementAndGet();
  }

  /** Ends an unload counted by {@link #unloadStarted()}. */
  public static void unloadEnded() {
    ACTIVE_UNLOADS.decrementAndGet();
  }

  /**
   * Counts {@code bytes} of working memory reserved by a run until the returned handle is closed,
   * so that a load measured meanwhile can tell how much of what it saw others could have taken.
   */
  public static Held working(long bytes) {
    WORKING_BYTES.addAndGet(bytes);
    AtomicBoolean open = new AtomicBoolean(true);
    return () -> {
      if (open.compareAndSet(true, false)) {
        WORKING_BYTES.addAndGet(-bytes);
      }
    };
  }

  /** Working memory counted by {@link #working}; closing it (idempotent) uncounts it. */
  @FunctionalInterface
  public interface Held extends AutoCloseable {
    @Override
    void close();
  }

  /**
   * Waits, at most {@link #YIELD_MAX_NANOS}, while another thread holds a quiet window: a trim of
   * the native heap lowers RSS under the load measured there. Call it before trimming.
   */
  public static void beforeTrim() {
    if (quietElsewhere()) {
      awaitQuietEnd(System.nanoTime() + YIELD_MAX_NANOS);
    }
  }

  /** What runs after each trim of the native heap; see {@link #afterTrims}. */
  private static volatile Runnable afterTrim = () -> {};

  /**
   * Counts a trim of the native heap, which lowers RSS: probes open meanwhile are not clean. Then
   * runs what {@link #afterTrims} set, on this thread.
   */
  public static void nativeHeapTrimmed() {
    TRIMS.incrementAndGet();
    try {
      afterTrim.run();
    } catch (RuntimeException e) {
      // an observer that fails must not fail the trim
    }
  }

  /**
   * Runs {@code action} after every later trim of the native heap, on the trimming thread (a memory
   * guard takes a fresh reading: what it remembered from before the trim is stale); the last action
   * set wins, {@code null} clears it.
   */
  public static void afterTrims(Runnable action) {
    afterTrim = action == null ? () -> {} : action;
  }

  /** Trims of the native heap counted so far. */
  public static long trims() {
    return TRIMS.get();
  }

  /**
   * Counts a run that is not measured; call {@link #runEnded()} when it ends. Cheap: two striped
   * counter updates.
   */
  public static void runStarted() {
    ACTIVE_RUNS.increment();
    if (quietFor != null) {
      yieldToQuiet(ACTIVE_RUNS::increment, ACTIVE_RUNS::decrement);
    }
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
    if (ACTIVE_LOADS.get() != 0
        || ACTIVE_UNLOADS.get() != 0
        || ACTIVE_RUNS.sum() != 0
        || ProcessMemory.residentBytes() < 0) {
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
                long working = WORKING_BYTES.get();
                for (Probe p : OPEN) {
                  p.see(rss);
                  p.seeWorking(working);
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
    private final long unloadsSeen;
    private final long runsSeen;
    private final long trimsSeen;
    private int ownTrims;
    private final boolean aloneAtStart;
    private final boolean noOtherLoadAtStart;
    private final AtomicLong peak;
    private final AtomicLong othersWorking;

    private Probe(boolean load) {
      this.load = load;
      this.loadsSeen = LOADS_STARTED.get();
      this.unloadsSeen = UNLOADS_STARTED.get();
      this.runsSeen = RUNS_STARTED.sum();
      this.trimsSeen = TRIMS.get();
      this.noOtherLoadAtStart = ACTIVE_LOADS.get() == (load ? 1 : 0);
      this.aloneAtStart =
          noOtherLoadAtStart && ACTIVE_UNLOADS.get() == 0 && ACTIVE_RUNS.sum() == (load ? 0 : 1);
      this.othersWorking = new AtomicLong(WORKING_BYTES.get());
      this.before = ProcessMemory.residentBytes();
      this.peak = new AtomicLong(before);
    }

    void see(long rss) {
      peak.accumulateAndGet(rss, Math::max);
    }

    void seeWorking(long bytes) {
      othersWorking.accumulateAndGet(bytes, Math::max);
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
      seeWorking(WORKING_BYTES.get());
      OPEN.remove(this);
      boolean noOtherLoad = noOtherLoadAtStart && LOADS_STARTED.get() == loadsSeen;
      boolean clean =
          aloneAtStart
              && noOtherLoad
              && before >= 0
              && UNLOADS_STARTED.get() == unloadsSeen
              && RUNS_STARTED.sum() == runsSeen
              && TRIMS.get() == trimsSeen + ownTrims;
      if (load) {
        ACTIVE_LOADS.decrementAndGet();
      } else {
        runEnded();
      }
      return new Reading(
          before,
          peak.get(),
          after,
          clean,
          load && noOtherLoad && before >= 0,
          othersWorking.get());
    }
  }

  /**
   * What a probe saw, in bytes of RSS.
   *
   * @param clean whether no other load, unload, run or trim overlapped the probe, so the
   *     differences are this operation's own
   * @param bounded whether, for a load, no other load overlapped it: then {@link #peakLowerBound()}
   *     is memory this load took, whatever unloads, trims and runs did
   * @param othersWorkingBytes the most working memory other runs held reserved during the probe
   */
  public record Reading(
      long before, long peak, long after, boolean clean, boolean bounded, long othersWorkingBytes) {

    /** A clean reading (tests; nothing else ran). */
    public Reading(long before, long peak, long after, boolean clean) {
      this(before, peak, after, clean, clean, 0);
    }

    /**
     * What this load certainly took at its peak, when {@link #bounded}: the peak less what other
     * runs could have added; else 0.
     */
    public long peakLowerBound() {
      return bounded ? Math.max(0, peakDelta() - othersWorkingBytes) : 0;
    }

    /** What this load certainly kept when it ended, when {@link #bounded}; else 0. */
    public long afterLowerBound() {
      return bounded ? Math.max(0, afterDelta() - othersWorkingBytes) : 0;
    }

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
