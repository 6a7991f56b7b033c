package dev.modelkeeper.onnx;

import java.lang.System.Logger.Level;
import java.lang.management.ManagementFactory;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * Returns freed native memory to the operating system. Thread-safe.
 *
 * <p>After ONNX Runtime frees a session, glibc's allocator keeps much of the freed memory (large
 * blocks land in its heaps once its dynamic mmap threshold has grown), so the process RSS climbs by
 * a few hundred MB under load/unload churn before it levels off. The JVM's {@code
 * System.trim_native_heap} diagnostic command (JDK 17.0.9 and later, glibc only) hands those pages
 * back; it is invoked in-process through the DiagnosticCommand MBean, so no flag or native code is
 * needed. Where the command is missing, trimming is a logged no-op. At most one trim runs at a
 * time; callers that find one running skip theirs.
 */
final class NativeHeap {

  private static final System.Logger LOG = System.getLogger(NativeHeap.class.getName());
  private static final String OPERATION = "systemTrimNativeHeap";
  private static final AtomicBoolean RUNNING = new AtomicBoolean();
  private static volatile boolean unavailable;

  private NativeHeap() {}

  /** Trims the native heap unless a trim is running or the JVM cannot; returns whether it ran. */
  static boolean trim() {
    if (unavailable || !RUNNING.compareAndSet(false, true)) {
      return false;
    }
    try {
      MBeanServer server = ManagementFactory.getPlatformMBeanServer();
      ObjectName name = new ObjectName("com.sun.management:type=DiagnosticCommand");
      Object result = server.invoke(
          name, OPERATION, new Object[] {new String[0]}, new String[] {String[].class.getName()});
      LOG.log(Level.DEBUG, "native heap trimmed: {0}", result);
      return true;
    } catch (JMException | RuntimeException e) {
      unavailable = true;
      LOG.log(Level.INFO, "cannot trim the native heap on this JVM ({0}); freed model memory may"
          + " stay with the allocator", e.toString());
      return false;
    } finally {
      RUNNING.set(false);
    }
  }
}
