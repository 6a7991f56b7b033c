package dev.modelkeeper.server.http.compression;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.Locale;
import java.util.zip.DeflaterOutputStream;
import java.util.zip.GZIPOutputStream;

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

  /** {@code body} in {@code coding} (from {@link #choose}). */
  public static byte[] compress(byte[] body, String coding) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(body.length / 4 + 64);
    try (OutputStream z =
        coding.equals("gzip") ? new GZIPOutputStream(out, 8192) : new DeflaterOutputStream(out)) {
      z.write(body);
    } catch (IOException e) {
      throw new UncheckedIOException(e); // not thrown by streams into memory
    }
    return out.toByteArray();
  }
}
