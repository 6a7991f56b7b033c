package dev.modelkeeper.onnx.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Faulting in the pages of a mapped file: the mappings are found, and a range unmapped meanwhile
 * (another session of the same pre-optimized form closing during a load) is never touched, which
 * crashed the process.
 */
class MappedPagesTest {

  @TempDir Path tmp;

  @Test
  void populate_ofAFileThisProcessMaps_faultsInItsMappings() throws Exception {
    assumeTrue(Files.isReadable(Path.of("/proc/self/maps")), "Linux only");
    Path file = tmp.resolve("weights.data");
    Files.write(file, new byte[1 << 20]);
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      MappedByteBuffer mapped = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size());

      long bytes = MappedPages.populate(file);

      assertThat(bytes).isGreaterThanOrEqualTo(1 << 20);
      assertThat(mapped.isLoaded()).isTrue();
    }
  }

  @Test
  void populate_ofAFileNotMapped_findsNothing() throws Exception {
    Path file = Files.write(tmp.resolve("other.data"), new byte[4096]);

    assertThat(MappedPages.populate(file)).isZero();
  }

  @Test
  void fault_ofARangeNoLongerMapped_returnsWithoutTouchingIt() {
    assumeTrue(Files.isReadable(Path.of("/proc/self/maps")), "Linux only");
    // below vm.mmap_min_addr: never mapped in any process, as a closed session's range may be by
    // the time it is faulted in
    MappedPages.fault(4096, 8 * 4096);
  }
}
