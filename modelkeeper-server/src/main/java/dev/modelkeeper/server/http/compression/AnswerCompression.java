package dev.modelkeeper.server.http.compression;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.Locale;
import java.util.zip.CRC32;
import java.util.zip.Deflater;
import java.util.zip.DeflaterOutputStream;

/**
 * Compresses an answer for a client whose {@code Accept-Encoding} asks for gzip or deflate (zlib),
 * as tritonclient's {@code response_compression_algorithm} does. Answers shorter than {@link
 * #MIN_BYTES} go as they are: compressing them costs more than it saves. Stateless and thread-safe.
 */
public final class AnswerCompression {

  /** The shortest answer worth compressing. */
  public static final int MIN_BYTES = 1024;

  private AnswerCompression() {}

  /**
   * The coding to answer a body of {@code length} bytes in for this {@code Accept-Encoding} header:
   * {@code gzip} or {@code deflate}, the client's first choice by weight; null for none.
   */
  public static String choose(String acceptEncoding, int length) {
    if (acceptEncoding == null || length < MIN_BYTES) {
      return null;
    }
    String best = null;
    double bestWeight = 0;
    for (String part : acceptEncoding.split(",")) {
      String[] fields = part.split(";");
      String coding = fields[0].trim().toLowerCase(Locale.ROOT);
      if (!coding.equals("gzip") && !coding.equals("deflate")) {
        continue;
      }
      double weight = 1;
      for (int i = 1; i < fields.length; i++) {
        String f = fields[i].trim();
        if (f.startsWith("q=")) {
          try {
            weight = Double.parseDouble(f.substring(2));
          } catch (NumberFormatException e) {
            weight = 0; // an unreadable weight: not chosen
          }
        }
      }
      if (weight > bestWeight) {
        best = coding;
        bestWeight = weight;
      }
    }
    return best;
  }

  /**
   * {@code body} in {@code coding} (from {@link #choose}), at the fastest level: on a server the
   * CPU an answer costs matters more than the last bytes of the ratio.
   */
  public static byte[] compress(byte[] body, String coding) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(body.length / 4 + 64);
    Deflater deflater = new Deflater(Deflater.BEST_SPEED, coding.equals("gzip"));
    try (OutputStream z =
        coding.equals("gzip")
            ? new FastGzip(out, deflater)
            : new DeflaterOutputStream(out, deflater, 8192)) {
      z.write(body);
    } catch (IOException e) {
      throw new UncheckedIOException(e); // not thrown by streams into memory
    } finally {
      deflater.end();
    }
    return out.toByteArray();
  }

  /**
   * A gzip stream (RFC 1952) over a raw deflater of the caller's: the JDK's own takes no level. Not
   * thread-safe.
   */
  private static final class FastGzip extends DeflaterOutputStream {
    private static final byte[] HEADER = {0x1f, (byte) 0x8b, 8, 0, 0, 0, 0, 0, 0, (byte) 0xff};
    private final CRC32 crc = new CRC32();
    private long length;

    FastGzip(OutputStream out, Deflater rawDeflater) throws IOException {
      super(out, rawDeflater, 8192);
      out.write(HEADER);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      super.write(b, off, len);
      crc.update(b, off, len);
      length += len;
    }

    @Override
    public void finish() throws IOException {
      super.finish();
      long c = crc.getValue();
      for (long v : new long[] {c, length & 0xffffffffL}) { // little-endian CRC-32 and ISIZE
        for (int i = 0; i < 4; i++) {
          out.write((int) (v >>> (8 * i)) & 0xff);
        }
      }
    }
  }
}
