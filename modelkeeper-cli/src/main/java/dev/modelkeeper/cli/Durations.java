package dev.modelkeeper.cli;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Parses durations such as {@code 30s}, {@code 500ms}, {@code 250us}, {@code 2m}, {@code 1h},
 * ISO-8601 {@code PT30S}, or a plain number of seconds. Stateless and thread-safe.
 */
public final class Durations {

  private static final Pattern SIMPLE =
      Pattern.compile("\\s*([0-9]+(?:\\.[0-9]+)?)\\s*(us|ms|s|m|h)?\\s*");

  private Durations() {}

  /**
   * The duration {@code text} names.
   *
   * @throws IllegalArgumentException when it is not a duration
   */
  public static Duration parse(String text) {
    if (text != null && text.trim().toUpperCase(Locale.ROOT).startsWith("P")) {
      try {
        return Duration.parse(text.trim());
      } catch (DateTimeParseException e) {
        throw notADuration(text);
      }
    }
    Matcher m = SIMPLE.matcher(text == null ? "" : text.toLowerCase(Locale.ROOT));
    if (!m.matches()) {
      throw notADuration(text);
    }
    double value = Double.parseDouble(m.group(1));
    String unit = m.group(2) == null ? "s" : m.group(2);
    double millis;
    switch (unit) {
      case "us":
        millis = value / 1000;
        break;
      case "ms":
        millis = value;
        break;
      case "m":
        millis = value * 60_000;
        break;
      case "h":
        millis = value * 3_600_000;
        break;
      default:
        millis = value * 1000;
    }
    if (millis > Long.MAX_VALUE / 2) {
      throw new IllegalArgumentException("'" + text + "' is too long");
    }
    return Duration.ofNanos(Math.round(millis * 1_000_000));
  }

  private static IllegalArgumentException notADuration(String text) {
    return new IllegalArgumentException(
        "'" + text + "' is not a duration; use e.g. 500ms, 30s, 2m, 1h or PT30S");
  }
}
