package dev.modelkeeper.server.statistics;

/**
 * How many times something happened and the nanoseconds it took in all. Immutable.
 *
 * @param count how many times
 * @param ns the nanoseconds of all of them together
 */
public record Timing(long count, long ns) {

  /** Nothing counted. */
  public static final Timing NONE = new Timing(0, 0);
}
