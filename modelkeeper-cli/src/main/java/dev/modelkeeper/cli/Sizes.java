package dev.modelkeeper.cli;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Parses and prints byte sizes such as {@code 512MB}, {@code 4GiB}, {@code 1.5 GB} or {@code 2048}.
 * Decimal units (KB, MB, GB, TB) are powers of 1000, binary units (KiB, MiB, GiB, TiB) powers of
 * 1024; case does not matter. Stateless and thread-safe.
 */
public final class Sizes {

  private static final Pattern SIZE =
      Pattern.compile("\\s*([0-9]+(?:\\.[0-9]+)?)\\s*([a-zA-Z]*)\\s*");
  private static final Map<String, Long> UNITS =
      Map.ofEntries(
          Map.entry("", 1L),
          Map.entry("b", 1L),
          Map.entry("kb", 1_000L),
          Map.entry("mb", 1_000_000L),
          Map.entry("gb", 1_000_000_000L),
          Map.entry("tb", 1_000_000_000_000L),
          Map.entry("kib", 1L << 10),
          Map.entry("mib", 1L << 20),
          Map.entry("gib", 1L << 30),
          Map.entry("tib", 1L << 40));

  private Sizes() {}

  /**
   * The number of bytes {@code text} names.
   *
   * @throws IllegalArgumentException when it is not a size, has an unknown unit, or overflows
   */
  public static long parse(String text) {
    Matcher m = SIZE.matcher(text == null ? "" : text);
    if (!m.matches()) {
      throw new IllegalArgumentException(
          "'" + text + "' is not a size; use bytes or a unit, e.g. 512MB or 4GiB");
    }
    Long unit = UNITS.get(m.group(2).toLowerCase(Locale.ROOT));
    if (unit == null) {
      throw new IllegalArgumentException(
          "'"
              + text
              + "' has an unknown unit '"
              + m.group(2)
              + "'; use B, KB, MB, GB, TB, KiB,"
              + " MiB, GiB or TiB");
    }
    BigDecimal bytes = new BigDecimal(m.group(1)).multiply(BigDecimal.valueOf(unit));
    try {
      return bytes.setScale(0, RoundingMode.CEILING).longValueExact();
    } catch (ArithmeticException e) {
      throw new IllegalArgumentException("'" + text + "' is too large");
    }
  }

  /** A short human form: {@code 512 MiB}, {@code 4 GiB}, {@code 1000 B}. */
  public static String format(long bytes) {
    String[] units = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = bytes;
    int u = 0;
    while (v >= 1024 && u < units.length - 1) {
      v /= 1024;
      u++;
    }
    return (v == Math.rint(v)
            ? String.format(Locale.ROOT, "%d", (long) v)
            : String.format(Locale.ROOT, "%.1f", v))
        + " "
        + units[u];
  }
}
