package dev.modelkeeper.server.http;

import dev.modelkeeper.server.admission.DirectBuffers;
import dev.modelkeeper.server.admission.RequestBytes;
import io.javalin.http.Context;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A request body received in full by the {@link BodyIntake} before any route saw the request, with
 * the {@link RequestBytes} that account for it: a body of announced length of at least {@link
 * DirectBuffers#MIN_BYTES} in one off-heap buffer (its binary tensors then reach ONNX Runtime
 * without another copy; the buffer goes back to its pool when the request's bytes are returned),
 * any other in blocks on the heap. Appended to on one thread at a time while it is received;
 * read-only (and then thread-safe) once it is handed to the routes.
 */
public final class RequestBody {

  /** The request attribute that carries the body from the intake to the routes. */
  static final String ATTRIBUTE = "modelkeeper.requestBody";

  private static final int BLOCK = 256 * 1024;
  private static final RequestBody EMPTY = new RequestBody(RequestBytes.untracked(), 0);

  private final RequestBytes bytes;
  private final List<byte[]> blocks = new ArrayList<>();
  private final long expected;
  private long length;

  /**
   * The whole body off-heap (written up to its position), or null when it is in {@link #blocks}.
   */
  private ByteBuffer direct;

  /** Where the off-heap buffer comes from, until the first bytes arrive; else null. */
  private DirectBuffers offHeap;

  /** An empty body on the heap that will hold {@code expected} bytes (unknown when negative). */
  public RequestBody(RequestBytes bytes, long expected) {
    this(bytes, expected, null);
  }

  /**
   * An empty body that will hold {@code expected} bytes (unknown when negative), off-heap in a
   * buffer of {@code offHeap} when that many are announced; the buffer is taken when the first
   * bytes arrive (after the intake has reserved them), not before.
   */
  public RequestBody(RequestBytes bytes, long expected, DirectBuffers offHeap) {
    this.bytes = bytes;
    this.expected = expected;
    if (expected >= DirectBuffers.MIN_BYTES && expected <= DirectBuffers.MAX_BYTES) {
      this.offHeap = offHeap;
    }
  }

  /** The body the intake attached to {@code ctx}; an empty one when the request had none. */
  public static RequestBody of(Context ctx) {
    RequestBody body = ctx.attribute(ATTRIBUTE);
    return body != null ? body : EMPTY;
  }

  /** Copies the remaining bytes of {@code buffer} into the body. */
  public void append(ByteBuffer buffer) {
    if (offHeap != null) {
      DirectBuffers pool = offHeap;
      ByteBuffer taken = pool.take((int) expected);
      offHeap = null;
      direct = taken;
      bytes.whenReturned(() -> pool.give(taken));
    }
    if (direct != null) {
      if (buffer.remaining() <= direct.remaining()) {
        length += buffer.remaining();
        direct.put(buffer);
        return;
      }
      // longer than announced: the bytes so far move to the heap, and the rest follows them there
      ByteBuffer received = direct.flip();
      direct = null;
      length = 0;
      append(received);
    }
    while (buffer.hasRemaining()) {
      int used = (int) (length % BLOCK);
      byte[] last;
      if (used == 0) {
        long left = expected > length ? expected - length : BLOCK;
        last = new byte[(int) Math.min(BLOCK, left)];
        blocks.add(last);
      } else {
        last = blocks.get(blocks.size() - 1);
      }
      int n = Math.min(buffer.remaining(), last.length - used);
      if (n == 0) {
        // the body is longer than announced; the block was sized to the announced length
        last = Arrays.copyOf(last, BLOCK);
        blocks.set(blocks.size() - 1, last);
        n = Math.min(buffer.remaining(), BLOCK - used);
      }
      buffer.get(last, used, n);
      length += n;
    }
  }

  /** The number of bytes received. */
  public long length() {
    return length;
  }

  /** The request's share of the in-flight budget. */
  public RequestBytes bytes() {
    return bytes;
  }

  /** The body as {@link ByteBuffer}s, in order, sharing this body's memory. */
  public List<ByteBuffer> buffers() {
    if (direct != null) {
      List<ByteBuffer> out = new ArrayList<>(1);
      out.add(direct.asReadOnlyBuffer().flip());
      return out;
    }
    List<ByteBuffer> out = new ArrayList<>(blocks.size());
    long left = length;
    for (byte[] b : blocks) {
      int n = (int) Math.min(b.length, left);
      out.add(ByteBuffer.wrap(b, 0, n).asReadOnlyBuffer());
      left -= n;
    }
    return out;
  }

  /** A fresh stream over the whole body. */
  public Stream stream() {
    return new Stream(buffers());
  }

  /**
   * A stream over the body's blocks that can also hand out the next bytes without copying them. Not
   * thread-safe: one reader.
   */
  public static final class Stream extends InputStream {
    private final List<ByteBuffer> buffers;
    private final boolean offHeap;
    private int index;

    private Stream(List<ByteBuffer> buffers) {
      this.buffers = buffers;
      this.offHeap = buffers.size() == 1 && buffers.get(0).isDirect();
    }

    /**
     * Whether the body is one off-heap buffer: what {@link #readBuffer} returns is a view of it.
     */
    public boolean offHeap() {
      return offHeap;
    }

    @Override
    public int read() {
      ByteBuffer b = current();
      return b == null ? -1 : b.get() & 0xff;
    }

    @Override
    public int read(byte[] dst, int off, int len) {
      if (len == 0) {
        return 0;
      }
      ByteBuffer b = current();
      if (b == null) {
        return -1;
      }
      int n = Math.min(len, b.remaining());
      b.get(dst, off, n);
      return n;
    }

    /** The next {@code len} bytes (fewer at the end), read into one array of that size. */
    @Override
    public byte[] readNBytes(int len) {
      int left = 0;
      for (int i = index; i < buffers.size() && left < len; i++) {
        ByteBuffer b = buffers.get(i);
        left += b == null ? 0 : Math.min(b.remaining(), len - left);
      }
      byte[] out = new byte[left];
      int at = 0;
      while (at < left) {
        at += read(out, at, left - at);
      }
      return out;
    }

    /**
     * The next {@code len} bytes (fewer at the end) as a read-only buffer: a view of the body's
     * memory (off-heap for an off-heap body) when they lie in one block, else a copy. Advances past
     * them.
     */
    public ByteBuffer readBuffer(int len) {
      ByteBuffer b = current();
      if (b != null && b.remaining() >= len) {
        ByteBuffer view = b.slice(b.position(), len);
        b.position(b.position() + len);
        return view;
      }
      return ByteBuffer.wrap(readNBytes(len)).asReadOnlyBuffer();
    }

    private ByteBuffer current() {
      while (index < buffers.size()) {
        ByteBuffer b = buffers.get(index);
        if (b.hasRemaining()) {
          return b;
        }
        buffers.set(index++, null);
      }
      return null;
    }
  }
}
