package dev.modelkeeper.onnx.memory;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The resident memory (RSS) of this process, read from {@code /proc/self/statm} (about 65 µs a
 * read), and the memory the machine or its container offers. Thread-safe; stateless but for the
 * page size, found once.
 *
 * <p>ONNX Runtime's Java API exposes no allocator statistics, so RSS sampled around loads and runs
 * is the one measure of what a model costs. Off Linux every reading is {@code -1} (unknown).
 */
public final class ProcessMemory {

  private static final Path STATM = Path.of("/proc/self/statm");
  private static final Path STATUS = Path.of("/proc/self/status");
  private static final long PAGE_BYTES = pageBytes();

  private ProcessMemory() {}

  /** This process's resident bytes now, or {@code -1} when the system does not say. */
  public static long residentBytes() {
    if (PAGE_BYTES <= 0) {
      return -1;
    }
    long pages = statmResidentPages();
    return pages < 0 ? -1 : pages * PAGE_BYTES;
  }

  /**
   * The memory limit of this process's cgroup (v2 {@code memory.max}, or v1 {@code
   * memory.limit_in_bytes}), or {@code -1} when there is none.
   */
  public static long cgroupLimitBytes() {
    for (Path p :
        new Path[] {
          Path.of("/sys/fs/cgroup/memory.max"),
          Path.of("/sys/fs/cgroup/memory/memory.limit_in_bytes")
        }) {
      try {
        String v = Files.readString(p, StandardCharsets.US_ASCII).trim();
        if (v.equals("max")) {
          return -1;
        }
        long bytes = Long.parseLong(v);
        // cgroup v1 writes a number near Long.MAX_VALUE for "no limit"
        return bytes >= (1L << 60) ? -1 : bytes;
      } catch (IOException | NumberFormatException | SecurityException e) {
        // not this cgroup version; try the next
      }
    }
    return -1;
  }

  /** The machine's physical memory in bytes, as the JVM sees it. */
  public static long physicalBytes() {
    java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
    if (os instanceof com.sun.management.OperatingSystemMXBean) {
      return ((com.sun.management.OperatingSystemMXBean) os).getTotalMemorySize();
    }
    return -1;
  }

  /**
   * The resident memory of process {@code pid} (a child of this one, say), from its {@code statm};
   * -1 when unknown (no such process, or not Linux).
   */
  public static long residentBytes(long pid) {
    if (PAGE_BYTES <= 0) {
      return -1;
    }
    long pages = statmResidentPages(Path.of("/proc", Long.toString(pid), "statm"));
    return pages < 0 ? -1 : pages * PAGE_BYTES;
  }

  private static long statmResidentPages() {
    return statmResidentPages(STATM);
  }

  private static long statmResidentPages(Path statm) {
    try {
      String s = Files.readString(statm, StandardCharsets.US_ASCII);
      int a = s.indexOf(' ');
      int b = s.indexOf(' ', a + 1);
      return Long.parseLong(s.substring(a + 1, b));
    } catch (IOException | RuntimeException e) {
      return -1;
    }
  }

  /** The page size: VmRSS (kB, from /proc/self/status) over statm's resident pages. */
  private static long pageBytes() {
    try {
      for (String line : Files.readAllLines(STATUS, StandardCharsets.US_ASCII)) {
        if (line.startsWith("VmRSS:")) {
          long kb = Long.parseLong(line.substring(6).trim().split("\\s+")[0]);
          long pages = statmResidentPages();
          if (pages <= 0) {
            return -1;
          }
          long ratio = kb * 1024 / pages;
          // round to the nearest power of two (the two readings are a moment apart)
          return Long.highestOneBit(ratio + ratio / 2);
        }
      }
    } catch (IOException | RuntimeException e) {
      // not Linux
    }
    return -1;
  }
}
