package dev.modelkeeper.onnx.memory;

import static org.assertj.core.api.Assertions.assertThat;

import dev.modelkeeper.core.testkit.LogCapture;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.logging.Level;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Measured costs are kept across restarts; a file that cannot be read is ignored with a WARN. */
class MemoryCostsTest {

  @TempDir Path dir;

  @Test
  void recordedCosts_surviveARestart_andChargeBeforeTheFirstLoad() {
    Path file = dir.resolve("memory-costs.json");
    MemoryCosts first = MemoryCosts.persistedIn(file);
    first.recordLoad("convnet/1", 67_000_000, 140_000_000, 78_000_000);
    first.recordRun("convnet/1", 67_000_000, 32, 9_000_000);

    MemoryCosts second = MemoryCosts.persistedIn(file);

    MemoryCost c = second.costOf("convnet/1", 67_000_000);
    assertThat(c.measured()).isTrue();
    assertThat(c.loadPeakBytes()).isEqualTo(140_000_000);
    assertThat(c.idleBytes()).isEqualTo(78_000_000);
    assertThat(c.workingBytes()).isEqualTo(9_000_000);
    assertThat(c.workingRows()).isEqualTo(32);
    assertThat(c.workingBytesFor(64)).isEqualTo(18_000_000);
    assertThat(c.workingBytesFor(1)).isEqualTo(9_000_000);
  }

  @Test
  void aCostOfAnotherFileSize_isNotUsed_theEstimateIs() {
    MemoryCosts costs = MemoryCosts.inMemory();
    costs.recordLoad("m/1", 1_000_000, 3_000_000, 2_000_000);

    MemoryCost c = costs.costOf("m/1", 2_000_000);

    assertThat(c.measured()).isFalse();
    assertThat(c).isEqualTo(MemoryCost.estimate(2_000_000));
  }

  @Test
  void theEstimate_isAboveWhatModelsWereMeasuredToTake() {
    MemoryCost e = MemoryCost.estimate(67_494_826); // the demo convnet: 145 MB peak, 78 MB idle
    assertThat(e.loadPeakBytes()).isGreaterThan(145_000_000);
    assertThat(e.idleBytes()).isGreaterThan(78_000_000);
    assertThat(MemoryCost.estimate(498).idleBytes()).isGreaterThan(300_000); // tiny: ~0.3 MB
  }

  @Test
  void aTinyModelMeasuredAtNothing_isChargedTheFloor() {
    MemoryCost c = MemoryCosts.inMemory().recordLoad("iris/1", 498, 0, 0);

    assertThat(c.idleBytes()).isEqualTo(MemoryCost.MEASURED_FLOOR_BYTES);
    assertThat(c.loadPeakBytes()).isEqualTo(MemoryCost.MEASURED_FLOOR_BYTES);
  }

  @Test
  void aSmallModelReadAtNothing_isChargedItsModelledFloor_aLargeOneItsReading() {
    MemoryCosts costs = MemoryCosts.inMemory();
    long kib = 1024;
    // mlp-medium: a 339 KiB file, one input and one output; 400 copies took 522-528 KiB each
    long floor = MemoryCost.floorBytes(346_742, 2);
    MemoryCost c = costs.recordLoad("mlp-medium/1", 346_742, floor, 0, 0);
    assertThat(c.idleBytes()).isBetween(500 * kib, 560 * kib);
    // types: a 1.2 KiB file, 19 inputs and outputs; 400 copies took 112-114 KiB each
    assertThat(MemoryCost.floorBytes(1259, 19)).isBetween(110 * kib, 130 * kib);
    // convnet: its reading stands, the file does not raise its floor
    long convnetFloor = MemoryCost.floorBytes(67_494_826, 2);
    assertThat(convnetFloor).isLessThan(100 * kib);
    c = costs.recordLoad("convnet/1", 67_494_826, convnetFloor, 140_000_000, 70_000_000);
    assertThat(c.idleBytes()).isEqualTo(70_000_000);
  }

  @Test
  void oneDisturbedLoadReading_doesNotSetTheCharge_theMedianOfTheLatestDoes() {
    MemoryCosts costs = MemoryCosts.inMemory();
    long kib = 1024;
    costs.recordLoad("mlp/1", 346_742, 520 * kib, 520 * kib);
    costs.recordLoad("mlp/1", 346_742, 530 * kib, 530 * kib);
    MemoryCost c = costs.recordLoad("mlp/1", 346_742, 2000 * kib, 2000 * kib); // a compilation ran

    assertThat(c.idleBytes()).isEqualTo(530 * kib);
    assertThat(c.loadPeakBytes()).isEqualTo(530 * kib);

    for (int i = 0; i < MemoryCosts.LOAD_READINGS; i++) {
      c = costs.recordLoad("mlp/1", 346_742, 600 * kib, 600 * kib);
    }
    assertThat(c.idleBytes()).as("only the latest readings count").isEqualTo(600 * kib);
  }

  @Test
  void runReadings_chargeTheMostAtTheLargestBatch_smallerBatchesAreDropped() {
    MemoryCosts costs = MemoryCosts.inMemory();
    long mib = 1 << 20;
    costs.recordRun("convnet/1", 67_000_000, 32, 9 * mib); // the first run after the load
    MemoryCost c = null;
    for (int i = 0; i < 20; i++) {
      c = costs.recordRun("convnet/1", 67_000_000, 32, 1 * mib); // reused what the first freed
    }
    assertThat(c.workingBytes()).isEqualTo(9 * mib);

    c = costs.recordRun("convnet/1", 67_000_000, 4, 20 * mib);
    assertThat(c.workingRows()).isEqualTo(32);
    assertThat(c.workingBytes()).isEqualTo(9 * mib);

    c = costs.recordRun("convnet/1", 67_000_000, 64, 5 * mib); // a reading that missed the peak
    assertThat(c.workingRows()).isEqualTo(64);
    assertThat(c.workingBytes()).as("a larger batch never lowers the figure").isEqualTo(9 * mib);
  }

  @Test
  void aSmallModelsRunReadings_chargeTheirMedian_soOneDisturbedReadingDoesNotSetIt() {
    MemoryCosts costs = MemoryCosts.inMemory();
    long kib = 1024;
    for (long bytes : new long[] {0, 4 * kib, 0, 8 * kib}) {
      costs.recordRun("types/1", 1259, 32, bytes);
    }
    MemoryCost c = costs.recordRun("types/1", 1259, 32, 5000 * kib); // a compilation ran
    assertThat(c.workingBytes()).isEqualTo(4 * kib);
  }

  @Test
  void aCorruptFile_isIgnoredWithOneWarning_andReplacedOnTheNextMeasurement() throws Exception {
    Path file = dir.resolve("memory-costs.json");
    Files.writeString(
        file, "{\"format\": 1, \"models\": {\"m/1\": {\"file_bytes\": ", StandardCharsets.UTF_8);
    MemoryCosts costs;
    try (LogCapture log = LogCapture.of(MemoryCosts.class)) {
      costs = MemoryCosts.persistedIn(file);
      assertThat(log.entries()).hasSize(1);
      assertThat(log.entries().get(0).level()).isEqualTo(Level.WARNING);
      assertThat(log.entries().get(0).message()).contains(file.toString()).contains("ignoring");
      assertThat(log.entries().get(0).thrown()).isNull();
    }
    assertThat(costs.costOf("m/1", 10).measured()).isFalse();

    costs.recordLoad("m/1", 10, 2_000_000, 1_000_000);

    assertThat(MemoryCosts.persistedIn(file).costOf("m/1", 10).idleBytes()).isEqualTo(1_000_000);
  }

  @Test
  void anEntryWithANegativeFigure_makesTheFileIgnored() throws Exception {
    Path file = dir.resolve("memory-costs.json");
    Files.writeString(
        file,
        "{\"format\": 1, \"models\": {\"m/1\": {\"file_bytes\": 10, \"load_peak_bytes\": -5,"
            + " \"idle_bytes\": 1, \"working_bytes\": 1}}}",
        StandardCharsets.UTF_8);
    try (LogCapture log = LogCapture.of(MemoryCosts.class)) {
      assertThat(MemoryCosts.persistedIn(file).costOf("m/1", 10).measured()).isFalse();
      assertThat(log.entries())
          .singleElement()
          .satisfies(e -> assertThat(e.message()).contains("load_peak_bytes"));
    }
  }

  @Test
  void anEntryWithAnImplausibleFigure_makesTheFileIgnored_soTheModelIsNotRefusedForever()
      throws Exception {
    // regression: a damaged file claiming 9e18 bytes for iris answered 507 on every load
    Path file = dir.resolve("memory-costs.json");
    Files.writeString(
        file,
        "{\"format\": 1, \"models\": {\"iris/1\": {\"file_bytes\": 498, \"load_peak_bytes\":"
            + " 9000000000000000000, \"idle_bytes\": 1, \"working_bytes\": 1}}}",
        StandardCharsets.UTF_8);
    try (LogCapture log = LogCapture.of(MemoryCosts.class)) {
      MemoryCost c = MemoryCosts.persistedIn(file).costOf("iris/1", 498);
      assertThat(c).isEqualTo(MemoryCost.estimate(498));
      assertThat(log.entries())
          .singleElement()
          .satisfies(e -> assertThat(e.message()).contains("not plausible"));
    }
  }
}
