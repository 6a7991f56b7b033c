package dev.modelkeeper.onnx.memory;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * Which readings a load may learn from: a clean one always; one in company with unloads, trims and
 * runs as a lower bound (what other runs reserved taken off); one beside another load never.
 */
class MemoryMeterTest {

  @Test
  void loadAlone_isClean_andBoundedByItsOwnPeak() {
    MemoryMeter.Reading r = MemoryMeter.startLoad().end();
    assertThat(r.clean()).isTrue();
    assertThat(r.bounded()).isTrue();
    assertThat(r.othersWorkingBytes()).isZero();
    assertThat(r.peakLowerBound()).isEqualTo(r.peakDelta());
  }

  @Test
  void loadBesideUnloadsTrimsAndRuns_isNotClean_butBoundedBelowWithoutTheRunsReservations() {
    MemoryMeter.Probe probe = MemoryMeter.startLoad();
    MemoryMeter.unloadStarted();
    MemoryMeter.unloadEnded();
    MemoryMeter.nativeHeapTrimmed();
    MemoryMeter.runStarted();
    MemoryMeter.Reading r;
    try (MemoryMeter.Held working = MemoryMeter.working(64L << 20)) {
      r = probe.end();
    } finally {
      MemoryMeter.runEnded();
    }
    assertThat(r.clean()).isFalse();
    assertThat(r.bounded()).isTrue();
    assertThat(r.othersWorkingBytes()).isEqualTo(64L << 20);
    assertThat(r.peakLowerBound()).isEqualTo(Math.max(0, r.peakDelta() - (64L << 20)));
  }

  @Test
  void loadBesideAnotherLoad_isNeitherCleanNorBounded() {
    MemoryMeter.Probe probe = MemoryMeter.startLoad();
    MemoryMeter.Probe other = MemoryMeter.startLoad();
    MemoryMeter.Reading r = probe.end();
    other.end();
    assertThat(r.clean()).isFalse();
    assertThat(r.bounded()).isFalse();
    assertThat(r.peakLowerBound()).isZero();
  }

  @Test
  void workingHandle_closedTwice_uncountsOnce() {
    MemoryMeter.Held a = MemoryMeter.working(100);
    a.close();
    a.close();
    MemoryMeter.Reading r = MemoryMeter.startLoad().end();
    assertThat(r.othersWorkingBytes()).isZero();
  }
}
