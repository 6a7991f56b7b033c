package dev.modelkeeper.server.memory;

import dev.modelkeeper.onnx.memory.ProcessMemory;
import java.util.Locale;

/**
 * The cap on the whole process's resident memory, heap included, and how it was chosen. Immutable.
 *
 * @param bytes the cap
 * @param source how it was chosen, for the startup summary (e.g. "--max-memory", "80% of the
 *     container's memory limit of 2.0 GiB")
 */
public record MemoryCap(long bytes, String source) {

  /** The share of the container's limit, or of the machine's memory, taken when no cap is set. */
  public static final double DEFAULT_SHARE = 0.8;

  /**
   * The cap {@code configured} bytes (from {@code --max-memory}), or when 0 the default share of
   * the container's memory limit, else of the machine's physical memory.
   */
  public static MemoryCap choose(long configured) {
    if (configured > 0) {
      return new MemoryCap(configured, "--max-memory");
    }
    long limit = ProcessMemory.cgroupLimitBytes();
    if (limit > 0) {
      return new MemoryCap(
          (long) (limit * DEFAULT_SHARE),
          percent() + " of the container's memory limit of " + format(limit));
    }
    long physical = ProcessMemory.physicalBytes();
    if (physical > 0) {
      return new MemoryCap(
          (long) (physical * DEFAULT_SHARE),
          percent() + " of the machine's memory of " + format(physical));
    }
    // no way to tell: the JVM's own view of what it may use, four times its heap
    return new MemoryCap(
        Runtime.getRuntime().maxMemory() * 4, "four times the maximum heap (memory size unknown)");
  }

  private static String percent() {
    return Math.round(DEFAULT_SHARE * 100) + "%";
  }

  /** A short human form: {@code 768 MiB}, {@code 2.0 GiB}. */
  public static String format(long bytes) {
    if (bytes >= 1L << 30) {
      return String.format(Locale.ROOT, "%.1f GiB", bytes / (double) (1L << 30));
    }
    return String.format(Locale.ROOT, "%d MiB", Math.round(bytes / (double) (1L << 20)));
  }
}
