package dev.modelkeeper.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A reading of the machine's CPU time (/proc/stat) and of this process's own, children included
 * (/proc/self/stat), so that the share of the CPUs that other processes took during a part of the
 * run can be reported beside its figures. Immutable and thread-safe.
 *
 * @param total all CPU ticks of the machine
 * @param busy ticks not idle and not waiting for I/O
 * @param own ticks of this process and its reaped children (the forked JMH JVMs)
 */
record CpuSample(long total, long busy, long own) {

  /** Now; all zero where /proc is not readable. */
  static CpuSample now() {
    try {
      String[] cpu = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
      long total = 0;
      for (int i = 1; i < Math.min(cpu.length, 9); i++) {
        total += Long.parseLong(cpu[i]);
      }
      long idle = Long.parseLong(cpu[4]) + Long.parseLong(cpu[5]);
      String self = Files.readString(Path.of("/proc/self/stat"));
      String[] f = self.substring(self.lastIndexOf(')') + 2).trim().split("\\s+");
      // after the command name: state is field 3, utime 14, stime 15, cutime 16, cstime 17
      long own =
          Long.parseLong(f[11])
              + Long.parseLong(f[12])
              + Long.parseLong(f[13])
              + Long.parseLong(f[14]);
      return new CpuSample(total, total - idle, own);
    } catch (IOException | RuntimeException e) {
      return new CpuSample(0, 0, 0);
    }
  }

  /**
   * The share (0..1) of all CPUs that other processes kept busy since {@code before}; NaN if
   * unknown.
   */
  double othersShareSince(CpuSample before) {
    long t = total - before.total;
    if (t <= 0) {
      return Double.NaN;
    }
    long others = (busy - before.busy) - (own - before.own);
    return Math.max(0, Math.min(1, (double) others / t));
  }
}
