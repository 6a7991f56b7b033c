package dev.modelkeeper.server.metrics;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalDouble;
import java.util.OptionalLong;

/**
 * The machine's CPU use and memory as Linux reports them in {@code /proc/stat} and {@code
 * /proc/meminfo}; empty where they cannot be read (another system). Thread-safe.
 */
final class HostReadings {

  private final Path stat;
  private final Path meminfo;
  private final Object lock = new Object();

  /** The busy and total CPU time of the previous reading, in the kernel's ticks. */
  @GuardedBy("lock")
  private long lastBusy;

  @GuardedBy("lock")
  private long lastTotal;

  HostReadings() {
    this(Path.of("/proc/stat"), Path.of("/proc/meminfo"));
  }

  HostReadings(Path stat, Path meminfo) {
    this.stat = stat;
    this.meminfo = meminfo;
  }

  /**
   * The share of every CPU's time spent busy (not idle, not waiting for I/O) since the previous
   * reading (since boot for the first), from 0 to 1.
   */
  OptionalDouble cpuUtilization() {
    long[] ticks = cpuTicks();
    if (ticks.length < 5) {
      return OptionalDouble.empty();
    }
    long total = 0;
    for (int i = 0; i < Math.min(ticks.length, 8); i++) { // user .. steal; guests are in user
      total += ticks[i];
    }
    long busy = total - ticks[3] - ticks[4]; // idle, iowait
    synchronized (lock) {
      long dTotal = total - lastTotal;
      long dBusy = busy - lastBusy;
      lastTotal = total;
      lastBusy = busy;
      return OptionalDouble.of(dTotal <= 0 ? 0 : Math.max(0, Math.min(1, (double) dBusy / dTotal)));
    }
  }

  /** The machine's memory in bytes. */
  OptionalLong memoryTotalBytes() {
    return meminfo("MemTotal:");
  }

  /** The memory in use: all of it but what the kernel counts as available. */
  OptionalLong memoryUsedBytes() {
    OptionalLong total = meminfo("MemTotal:");
    OptionalLong available = meminfo("MemAvailable:");
    if (total.isEmpty() || available.isEmpty()) {
      return OptionalLong.empty();
    }
    return OptionalLong.of(Math.max(0, total.getAsLong() - available.getAsLong()));
  }

  private long[] cpuTicks() {
    List<String> lines = lines(stat);
    if (lines.isEmpty() || !lines.get(0).startsWith("cpu ")) {
      return new long[0];
    }
    String[] fields = lines.get(0).trim().split("\\s+");
    long[] out = new long[fields.length - 1];
    try {
      for (int i = 1; i < fields.length; i++) {
        out[i - 1] = Long.parseLong(fields[i]);
      }
    } catch (NumberFormatException e) {
      return new long[0];
    }
    return out;
  }

  private OptionalLong meminfo(String key) {
    for (String line : lines(meminfo)) {
      if (line.startsWith(key)) {
        String[] fields = line.substring(key.length()).trim().split("\\s+");
        try {
          long kib = Long.parseLong(fields[0]);
          return OptionalLong.of(kib * 1024);
        } catch (NumberFormatException e) {
          return OptionalLong.empty();
        }
      }
    }
    return OptionalLong.empty();
  }

  private static List<String> lines(Path file) {
    try {
      return Files.readAllLines(file, StandardCharsets.US_ASCII);
    } catch (IOException | RuntimeException e) {
      return List.of();
    }
  }
}
