package dev.modelkeeper.server.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code nv_cpu_*} figures from {@code /proc/stat} and {@code /proc/meminfo} as Linux writes them.
 */
class HostReadingsTest {

  @TempDir Path dir;

  @Test
  void cpuUtilization_isTheBusyShareSinceThePreviousReading() throws Exception {
    Path stat = dir.resolve("stat");
    HostReadings host = new HostReadings(stat, dir.resolve("meminfo"));
    // user nice system idle iowait irq softirq steal guest guest_nice
    Files.writeString(stat, "cpu  100 0 100 700 100 0 0 0 0 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n");
    assertThat(host.cpuUtilization().getAsDouble()).isCloseTo(0.2, within(1e-9));
    Files.writeString(stat, "cpu  250 0 150 850 150 0 0 0 0 0\n");
    assertThat(host.cpuUtilization().getAsDouble()).isCloseTo(0.5, within(1e-9));
    Files.writeString(stat, "cpu  250 0 150 850 150 0 0 0 0 0\n");
    assertThat(host.cpuUtilization().getAsDouble()).isZero();
  }

  @Test
  void memory_isTotalAndAllButWhatIsAvailable() throws Exception {
    Path meminfo = dir.resolve("meminfo");
    Files.writeString(
        meminfo, "MemTotal:        1000 kB\nMemFree:          100 kB\nMemAvailable:     250 kB\n");
    HostReadings host = new HostReadings(dir.resolve("stat"), meminfo);
    assertThat(host.memoryTotalBytes().getAsLong()).isEqualTo(1000 * 1024);
    assertThat(host.memoryUsedBytes().getAsLong()).isEqualTo(750 * 1024);
  }

  @Test
  void readings_whereProcCannotBeRead_areEmpty() {
    HostReadings host = new HostReadings(dir.resolve("none"), dir.resolve("none"));
    assertThat(host.cpuUtilization()).isEmpty();
    assertThat(host.memoryTotalBytes()).isEmpty();
    assertThat(host.memoryUsedBytes()).isEmpty();
  }
}
