package dev.modelkeeper.onnx;

import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * BYTES elements across ONNX Runtime's Java API, which passes string tensors as Java strings and
 * converts them to and from the runtime's bytes in modified UTF-8 (the JNI encoding): U+0000
 * becomes {@code c0 80}, a character beyond U+FFFF becomes its two UTF-16 surrogates of 3 bytes
 * each, and a string handed back ends at its first 0x00 byte. So exactly the byte sequences that
 * are valid modified UTF-8 reach the model unchanged; this class carries those and refuses the
 * rest, naming the element and the byte, rather than let the runtime change them. Stateless and
 * thread-safe.
 *
 * <p>What this means for clients: BYTES elements that are UTF-8 text without NUL characters and
 * without characters beyond U+FFFF pass unchanged; an element with a 0x00 byte, a 4-byte UTF-8
 * sequence or bytes that are not UTF-8 is refused with 400. String outputs are read back as the
 * bytes the runtime held; an output element that the model filled with a 0x00 byte or with bytes
 * that are not modified UTF-8 cannot be read exactly through the Java API (a documented limit).
 */
final class OrtStrings {

  private OrtStrings() {}

  /**
   * The Java string that ONNX Runtime's Java API turns into exactly {@code bytes}.
   *
   * @throws InvalidInputException naming tensor {@code tensor}, element {@code element} and the
   *     first byte that the Java API cannot pass unchanged
   */
  static String toOrt(String tensor, int element, byte[] bytes) {
    int n = bytes.length;
    int i = 0;
    while (i < n && bytes[i] > 0) {
      i++; // ASCII without NUL: the common case, one char per byte
    }
    if (i == n) {
      return new String(bytes, StandardCharsets.ISO_8859_1);
    }
    char[] chars = new char[n];
    int c = 0;
    for (int k = 0; k < i; k++) {
      chars[c++] = (char) bytes[k];
    }
    while (i < n) {
      int b = bytes[i] & 0xff;
      if (b == 0) {
        throw refused(tensor, element, i, "holds a NUL byte (0x00)", "c0 80");
      }
      if (b < 0x80) {
        chars[c++] = (char) b;
        i++;
      } else if (b >= 0xc0 && b < 0xe0 && i + 1 < n && continuation(bytes[i + 1])) {
        int v = ((b & 0x1f) << 6) | (bytes[i + 1] & 0x3f);
        if (v < 0x80 && v != 0) {
          throw notUtf8(tensor, element, i, b);
        }
        chars[c++] = (char) v;
        i += 2;
      } else if (b >= 0xe0
          && b < 0xf0
          && i + 2 < n
          && continuation(bytes[i + 1])
          && continuation(bytes[i + 2])) {
        int v = ((b & 0x0f) << 12) | ((bytes[i + 1] & 0x3f) << 6) | (bytes[i + 2] & 0x3f);
        if (v < 0x800) {
          throw notUtf8(tensor, element, i, b);
        }
        chars[c++] = (char) v;
        i += 3;
      } else if (b >= 0xf0 && b < 0xf5) {
        throw refused(
            tensor,
            element,
            i,
            "holds a 4-byte UTF-8 sequence (a character beyond U+FFFF)",
            "6 bytes of CESU-8");
      } else {
        throw notUtf8(tensor, element, i, b);
      }
    }
    return new String(chars, 0, c);
  }

  /** The bytes ONNX Runtime held for string {@code s} it handed back (modified UTF-8). */
  static byte[] fromOrt(String s) {
    int n = s.length();
    int length = 0;
    for (int i = 0; i < n; i++) {
      char ch = s.charAt(i);
      length += ch != 0 && ch < 0x80 ? 1 : ch < 0x800 ? 2 : 3;
    }
    if (length == n) {
      return s.getBytes(StandardCharsets.ISO_8859_1);
    }
    byte[] out = new byte[length];
    int o = 0;
    for (int i = 0; i < n; i++) {
      char ch = s.charAt(i);
      if (ch != 0 && ch < 0x80) {
        out[o++] = (byte) ch;
      } else if (ch < 0x800) {
        out[o++] = (byte) (0xc0 | (ch >> 6));
        out[o++] = (byte) (0x80 | (ch & 0x3f));
      } else {
        out[o++] = (byte) (0xe0 | (ch >> 12));
        out[o++] = (byte) (0x80 | ((ch >> 6) & 0x3f));
        out[o++] = (byte) (0x80 | (ch & 0x3f));
      }
    }
    return out;
  }

  private static boolean continuation(byte b) {
    return (b & 0xc0) == 0x80;
  }

  private static InvalidInputException refused(
      String tensor, int element, int at, String what, String becomes) {
    return new InvalidInputException(
        String.format(
            Locale.ROOT,
            "BYTES element %d of input '%s' %s at byte %d, which ONNX Runtime's Java API cannot"
                + " pass to the model unchanged (it would arrive as %s); send UTF-8 text without"
                + " NUL characters and without characters beyond U+FFFF",
            element,
            tensor,
            what,
            at,
            becomes));
  }

  private static InvalidInputException notUtf8(String tensor, int element, int at, int b) {
    return new InvalidInputException(
        String.format(
            Locale.ROOT,
            "BYTES element %d of input '%s' is not UTF-8 at byte %d (0x%02x), and ONNX Runtime's"
                + " Java API passes only UTF-8 strings to the model; send UTF-8 text without NUL"
                + " characters and without characters beyond U+FFFF",
            element,
            tensor,
            at,
            b));
  }
}
