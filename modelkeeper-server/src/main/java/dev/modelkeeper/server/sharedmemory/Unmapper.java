package dev.modelkeeper.server.sharedmemory;

import java.lang.System.Logger.Level;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;

/**
 * Unmaps a mapped buffer at once rather than when the garbage collector finds it unreachable: Java
 * 17 has no public call for it, so this uses the JDK's own buffer cleaner ({@code
 * sun.misc.Unsafe.invokeCleaner}, in the {@code jdk.unsupported} module). Where that is not
 * reachable, a buffer is left to the collector. The caller guarantees that nothing reads or writes
 * the buffer, or any view of it, afterwards: such an access would fault. Thread-safe.
 */
final class Unmapper {

  private static final System.Logger LOG = System.getLogger(Unmapper.class.getName());

  private static final MethodHandle CLEANER = find();

  private Unmapper() {}

  private static MethodHandle find() {
    try {
      Class<?> unsafe = Class.forName("sun.misc.Unsafe");
      Field the = unsafe.getDeclaredField("theUnsafe");
      the.setAccessible(true);
      return MethodHandles.lookup()
          .findVirtual(unsafe, "invokeCleaner", MethodType.methodType(void.class, ByteBuffer.class))
          .bindTo(the.get(null));
    } catch (ReflectiveOperationException | RuntimeException e) {
      LOG.log(
          Level.INFO,
          "shared memory regions are unmapped by the garbage collector, not at unregister: {0}",
          e.toString());
      return null;
    }
  }

  /** Unmaps {@code buffer} now, or leaves it to the collector when that cannot be done. */
  static void unmap(MappedByteBuffer buffer) {
    if (CLEANER == null) {
      return;
    }
    try {
      CLEANER.invokeExact((ByteBuffer) buffer);
    } catch (Throwable e) { // invokeExact declares Throwable; an unmapped buffer stays to the GC
      LOG.log(Level.DEBUG, "could not unmap a shared memory region: {0}", e.toString());
    }
  }
}
