package dev.modelkeeper.server.http.compression;

import dev.modelkeeper.server.errors.BadRequestException;
import dev.modelkeeper.server.errors.PayloadTooLargeException;
import dev.modelkeeper.server.http.RequestBody;
import dev.modelkeeper.server.http.UnsupportedMediaTypeException;
import java.io.IOException;
import java.io.InputStream;
import java.io.SequenceInputStream;
import java.nio.ByteBuffer;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.zip.GZIPInputStream;
import java.util.zip.InflaterInputStream;

/**
 * Inflates one compressed request body that has arrived in full into a new body, {@link #STEP}
 * bytes at a time: each step's bytes are reserved in the request's share of the in-flight budget
 * before they are kept (waiting without a thread when the budget is full), and the inflated total
 * is held to the request size limit as it grows, so a small body that would inflate to gigabytes is
 * refused 413 after at most that limit, the memory for it never taken. Not thread-safe: one per
 * body, driven by the budget's callbacks one step after another.
 */
public final class BodyInflation {

  /** The bytes inflated and reserved at a time. */
  static final int STEP = 256 * 1024;

  private final String encoding;
  private final InputStream inflating;
  private final RequestBody compressed;
  private final RequestBody inflated;
  private final long maxBytes;
  private final Consumer<RequestBody> done;
  private final Consumer<RuntimeException> failed;
  private final byte[] step = new byte[STEP];
  private long reserved;

  private BodyInflation(
      String encoding,
      InputStream inflating,
      RequestBody compressed,
      long maxBytes,
      Consumer<RequestBody> done,
      Consumer<RuntimeException> failed) {
    this.encoding = encoding;
    this.inflating = inflating;
    this.compressed = compressed;
    this.inflated = new RequestBody(compressed.bytes(), -1);
    this.maxBytes = maxBytes;
    this.done = done;
    this.failed = failed;
  }

  /**
   * The one content coding of a body with these {@code Content-Encoding} header values ({@code
   * gzip} or {@code deflate}), or null when it is not encoded.
   *
   * @throws UnsupportedMediaTypeException for any other coding, or more than one
   */
  public static String encoding(List<String> headerValues) {
    String found = null;
    for (String header : headerValues) {
      for (String v : header.split(",")) {
        String e = v.trim().toLowerCase(Locale.ROOT);
        if (e.isEmpty() || e.equals("identity")) {
          continue;
        }
        if (!e.equals("gzip") && !e.equals("x-gzip") && !e.equals("deflate") || found != null) {
          throw new UnsupportedMediaTypeException(
              "Content-Encoding '"
                  + header
                  + "' is not accepted; send the body uncompressed, or in one of gzip and"
                  + " deflate");
        }
        found = e.equals("x-gzip") ? "gzip" : e;
      }
    }
    return found;
  }

  /**
   * Inflates {@code compressed} (in {@code encoding}, from {@link #encoding}) and hands the result
   * to {@code done}, or the failure to {@code failed}: 413 past {@code maxBytes} inflated, 400 for
   * a body that is not valid in its coding, 503 when the budget had no room in time.
   */
  public static void inflate(
      String encoding,
      RequestBody compressed,
      long maxBytes,
      Consumer<RequestBody> done,
      Consumer<RuntimeException> failed) {
    InputStream in;
    try {
      in = stream(encoding, compressed.buffers());
    } catch (IOException e) {
      failed.accept(malformed(encoding));
      return;
    }
    new BodyInflation(encoding, in, compressed, maxBytes, done, failed).next();
  }

  private static InputStream stream(String encoding, List<ByteBuffer> buffers) throws IOException {
    InputStream raw =
        new SequenceInputStream(
            Collections.enumeration(buffers.stream().map(BufferStream::new).toList()));
    return encoding.equals("gzip") ? new GZIPInputStream(raw, 8192) : new InflaterInputStream(raw);
  }

  /** Inflates up to the next reservation, or to the end. */
  private void next() {
    try {
      while (true) {
        int n = inflating.readNBytes(step, 0, STEP);
        if (n == 0) {
          inflating.close();
          done.accept(inflated);
          return;
        }
        long after = inflated.length() + n;
        if (after > maxBytes) {
          inflating.close();
          failed.accept(
              new PayloadTooLargeException(
                  "the request body inflates to more than the limit of "
                      + maxBytes
                      + " bytes (max-request-bytes)"));
          return;
        }
        ByteBuffer piece = ByteBuffer.wrap(step, 0, n);
        if (after > reserved) {
          CompletableFuture<Void> room = compressed.bytes().reserveAsync(STEP);
          if (!room.isDone() || room.isCompletedExceptionally()) { // wait for it without a thread
            ByteBuffer pending = ByteBuffer.wrap(step.clone(), 0, n);
            room.whenComplete(
                (ok, refused) -> {
                  if (refused != null) {
                    failed.accept(
                        refused instanceof RuntimeException r
                            ? r
                            : new IllegalStateException(refused));
                    return;
                  }
                  reserved += STEP;
                  inflated.append(pending);
                  next();
                });
            return;
          }
          reserved += STEP;
        }
        inflated.append(piece);
      }
    } catch (IOException e) {
      failed.accept(malformed(encoding));
    }
  }

  private static BadRequestException malformed(String coding) {
    return new BadRequestException(
        "the request body is not valid " + coding + " (its Content-Encoding)");
  }

  /** The remaining bytes of a buffer as a stream, without copying them. */
  private static final class BufferStream extends InputStream {
    private final ByteBuffer b;

    BufferStream(ByteBuffer b) {
      this.b = b.slice();
    }

    @Override
    public int read() {
      return b.hasRemaining() ? b.get() & 0xFF : -1;
    }

    @Override
    public int read(byte[] dst, int off, int len) {
      if (!b.hasRemaining()) {
        return len == 0 ? 0 : -1;
      }
      int n = Math.min(len, b.remaining());
      b.get(dst, off, n);
      return n;
    }
  }
}
