package dev.modelkeeper.cli;

import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.Function;
import picocli.CommandLine;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * How option values are read: durations ({@link Durations}), sizes ({@link Sizes}), whole numbers,
 * log formats and folders with {@code ~} for the home folder. A bad value fails with a sentence
 * saying what was expected. Stateless and thread-safe.
 */
final class Converters {

  private Converters() {}

  /** Registers the converters that apply by type on {@code cl}. */
  static void register(CommandLine cl) {
    cl.registerConverter(Duration.class, reading(Durations::parse));
    cl.registerConverter(Integer.class, reading(Converters::wholeNumber));
    cl.registerConverter(int.class, reading(Converters::wholeNumber));
    cl.registerConverter(Logging.Format.class, reading(Logging.Format::parse));
    cl.registerConverter(Path.class, reading(Converters::folder));
  }

  /** Sizes such as {@code 512MB} or {@code 4GiB}; named on each size option. */
  static final class Size implements ITypeConverter<Long> {
    @Override
    public Long convert(String value) {
      return read(Sizes::parse, value);
    }
  }

  private static <T> ITypeConverter<T> reading(Function<String, T> parser) {
    return value -> read(parser, value);
  }

  private static <T> T read(Function<String, T> parser, String value) {
    try {
      return parser.apply(value.trim());
    } catch (IllegalArgumentException e) {
      throw new TypeConversionException(e.getMessage());
    }
  }

  private static int wholeNumber(String value) {
    try {
      return Integer.parseInt(value);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("'" + value + "' is not a whole number", e);
    }
  }

  private static Path folder(String value) {
    try {
      if (value.equals("~") || value.startsWith("~/")) {
        return Path.of(System.getProperty("user.home"), value.substring(1).replaceFirst("^/", ""));
      }
      return Path.of(value);
    } catch (InvalidPathException e) {
      throw new IllegalArgumentException(e.getMessage(), e);
    }
  }
}
