package dev.modelkeeper.server.admission;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Off-heap memory for large request bodies and messages, so their tensors reach ONNX Runtime
 * without a copy on the Java heap: a buffer is filled once from the wire and its tensors are handed
 * over in place. Buffers are kept for reuse by power-of-two capacity, up to a bound on the bytes
 * kept idle; a buffer given back past that bound is dropped and freed by the garbage collector.
 * Their use is bounded by the in-flight budget that admits the requests. Thread-safe.
 *
 * <p>A buffer given back while a run still reads it (a request answered by its timeout while its
 * model runs on) stays valid memory: it is only reused, never freed, under that run, and what the
 * run then reads answers nobody.
 */
public final class DirectBuffers {

  /** Bodies and messages of at least this many bytes are held off-heap. */
  public static final int MIN_BYTES = 64 * 1024;

  /** The largest buffer handed out; larger bodies and messages stay on the heap. */
  public static final int MAX_BYTES = 1 << 30;

  private static final int CLASSES = Integer.numberOfTrailingZeros(MAX_BYTES) + 1;

  private final long maxIdleBytes;
  private final AtomicLong idle = new AtomicLong();
  private final AtomicLong inUse = new AtomicLong();

  /** Idle buffers by size class: class c holds buffers of 2^c bytes. */
  private final List<ConcurrentLinkedQueue<ByteBuffer>> free = new ArrayList<>(CLASSES);

  /**
   * @param maxIdleBytes the most bytes kept idle for reuse
   */
  public DirectBuffers(long maxIdleBytes) {
    this.maxIdleBytes = maxIdleBytes;
    for (int i = 0; i < CLASSES; i++) {
      free.add(new ConcurrentLinkedQueue<>());
    }
  }

  /**
   * A direct buffer with room for {@code length} bytes: position 0, limit {@code length}, contents
   * undefined. Give it back with {@link #give} once nothing reads it.
   */
  public ByteBuffer take(int length) {
    int c = sizeClass(length);
    ByteBuffer b = free.get(c).poll();
    if (b == null) {
      b = ByteBuffer.allocateDirect(1 << c);
    } else {
      idle.addAndGet(-b.capacity());
    }
    inUse.addAndGet(b.capacity());
    return b.clear().limit(length);
  }

  /** Takes back a buffer {@link #take} handed out; keeps it for reuse while under the bound. */
  public void give(ByteBuffer b) {
    int c = Integer.numberOfTrailingZeros(b.capacity());
    if (!b.isDirect() || b.capacity() != 1 << c) {
      throw new IllegalArgumentException("not a buffer of this pool");
    }
    inUse.addAndGet(-b.capacity());
    if (idle.addAndGet(b.capacity()) > maxIdleBytes) {
      idle.addAndGet(-b.capacity());
      return;
    }
    free.get(c).add(b);
  }

  /** The bytes of the buffers handed out and not given back. */
  public long inUseBytes() {
    return inUse.get();
  }

  /** The bytes kept idle for reuse now. */
  public long idleBytes() {
    return idle.get();
  }

  private static int sizeClass(int length) {
    if (length < 0 || length > MAX_BYTES) {
      throw new IllegalArgumentException("cannot hold " + length + " bytes in one buffer");
    }
    return 32 - Integer.numberOfLeadingZeros(Math.max(MIN_BYTES, length) - 1);
  }
}
