package dev.modelkeeper.onnx;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.modelkeeper.onnx.memory.MemoryMeter;
import java.lang.System.Logger.Level;
import java.lang.management.ManagementFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * Returns freed native memory to the operating system once model churn pauses. Thread-safe.
 *
 * <p>After ONNX Runtime frees a session, glibc's allocator keeps much of the freed memory (large
 * blocks land in its heaps once its dynamic mmap threshold has grown), so the process RSS climbs by
 * a few hundred MB under load/unload churn before it levels off. The JVM's {@code
 * System.trim_native_heap} diagnostic command (JDK 17.0.9 and later, glibc only) hands those pages
 * back; it is invoked in-process through the DiagnosticCommand MBean, so no flag or native code is
 * needed. Where the command is missing, trimming is a logged no-op.
 *
 * <p>Trimming is not free: the next load has to fault the returned pages in again. So {@link
 * #requestTrim()} only schedules a trim on one daemon thread, which runs it once no request has
 * arrived for {@link #QUIET_MILLIS} ms, or at the latest {@link #MAX_DELAY_MILLIS} ms after the
 * first pending request (so that steady churn is trimmed too). The scheduling state is guarded by a
 * private monitor held only for bookkeeping, never while trimming.
 */
public final class NativeHeap {

  /** A trim runs once unloads have paused this long. */
  static final long QUIET_MILLIS = 200;

  /** ...or at the latest this long after the first unload that asked for it. */
  static final long MAX_DELAY_MILLIS = 5_000;

  private static final System.Logger LOG = System.getLogger(NativeHeap.class.getName());
  private static final String OPERATION = "systemTrimNativeHeap";
  private static final Object LOCK = new Object();
  private static final AtomicLong TRIMS = new AtomicLong();

  @GuardedBy("LOCK")
  private static boolean pending;

  @GuardedBy("LOCK")
  private static long firstRequestNanos;

  @GuardedBy("LOCK")
  private static long lastRequestNanos;

  @GuardedBy("LOCK")
  private static Thread worker;

  private static volatile boolean unavailable;

  private NativeHeap() {}

  /** Schedules a trim (see the class comment); returns at once. */
  public static void requestTrim() {
    if (unavailable) {
      return;
    }
    synchronized (LOCK) {
      long now = System.nanoTime();
      if (!pending) {
        pending = true;
        firstRequestNanos = now;
      }
      lastRequestNanos = now;
      if (worker == null) {
        worker = new Thread(NativeHeap::run, "modelkeeper-native-heap-trim");
        worker.setDaemon(true);
        worker.start();
      }
      LOCK.notifyAll();
    }
  }

  /**
   * Returns freed native memory to the operating system now, on this thread (a few milliseconds); a
   * no-op where the JVM cannot.
   */
  public static void trim() {
    if (!unavailable) {
      trimNow();
    }
  }

  /** Trims completed since the JVM started. */
  static long trimCount() {
    return TRIMS.get();
  }

  private static void run() {
    while (!unavailable) {
      try {
        awaitDue();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
      trimNow();
    }
  }

  /** Waits until a pending trim is due and clears the pending flag. */
  private static void awaitDue() throws InterruptedException {
    synchronized (LOCK) {
      while (true) {
        if (!pending) {
          LOCK.wait();
          continue;
        }
        long now = System.nanoTime();
        long due =
            Math.min(
                lastRequestNanos + TimeUnit.MILLISECONDS.toNanos(QUIET_MILLIS),
                firstRequestNanos + TimeUnit.MILLISECONDS.toNanos(MAX_DELAY_MILLIS));
        long waitNanos = due - now;
        if (waitNanos <= 0) {
          pending = false;
          return;
        }
        TimeUnit.NANOSECONDS.timedWait(LOCK, waitNanos);
      }
    }
  }

  private static void trimNow() {
    MemoryMeter.beforeTrim();
    try {
      MBeanServer server = ManagementFactory.getPlatformMBeanServer();
      ObjectName name = new ObjectName("com.sun.management:type=DiagnosticCommand");
      Object result =
          server.invoke(
              name,
              OPERATION,
              new Object[] {new String[0]},
              new String[] {String[].class.getName()});
      LOG.log(Level.DEBUG, "native heap trimmed: {0}", result);
    } catch (JMException | RuntimeException e) {
      unavailable = true;
      LOG.log(
          Level.INFO,
          "cannot trim the native heap on this JVM ({0}); freed model memory may"
              + " stay with the allocator",
          e.toString());
    } finally {
      TRIMS.incrementAndGet();
      MemoryMeter.nativeHeapTrimmed();
    }
  }
}
