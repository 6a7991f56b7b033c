package dev.modelkeeper.core.testkit;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * Records what the library logs under one logger name (its {@code System.Logger}s go to
 * java.util.logging by default), whatever the logging configuration of the run. Close it to restore
 * the logger. Thread-safe.
 */
public final class LogCapture implements AutoCloseable {

  /** One record and the thread that logged it. */
  public record Entry(Level level, String message, Throwable thrown, Thread thread) {}

  private final Logger logger;
  private final Level previousLevel;
  private final boolean previousUseParent;
  private final List<Entry> entries = new CopyOnWriteArrayList<>();
  private final Handler handler =
      new Handler() {
        @Override
        public void publish(LogRecord r) {
          entries.add(
              new Entry(r.getLevel(), r.getMessage(), r.getThrown(), Thread.currentThread()));
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
      };

  private LogCapture(Class<?> source) {
    logger = Logger.getLogger(source.getName());
    previousLevel = logger.getLevel();
    previousUseParent = logger.getUseParentHandlers();
    handler.setLevel(Level.ALL);
    logger.addHandler(handler);
    logger.setLevel(Level.ALL);
    logger.setUseParentHandlers(false);
  }

  /** Starts recording everything {@code source} logs, debug included. */
  public static LogCapture of(Class<?> source) {
    return new LogCapture(source);
  }

  public List<Entry> entries() {
    return List.copyOf(entries);
  }

  /** Messages logged at {@code level} (java.util.logging's: FINE is debug). */
  public List<String> messages(Level level) {
    return entries.stream().filter(e -> e.level().equals(level)).map(Entry::message).toList();
  }

  /** The first record matching {@code test}; fails when there is none. */
  public Entry first(Predicate<Entry> test) {
    return entries.stream()
        .filter(test)
        .findFirst()
        .orElseThrow(() -> new AssertionError("no such log record in " + entries));
  }

  @Override
  public void close() {
    logger.removeHandler(handler);
    logger.setLevel(previousLevel);
    logger.setUseParentHandlers(previousUseParent);
  }
}
