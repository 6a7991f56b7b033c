package dev.modelkeeper.onnx.memory;

import static org.assertj.core.api.Assertions.assertThat;

import dev.modelkeeper.core.testkit.Async;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Which readings a load may learn from: a clean one always; one in company with unloads, trims and
 * runs as a lower bound (what other runs reserved taken off); one beside another load never. And
 * the quiet window, which keeps a load to be measured alone: what starts meanwhile waits for it.
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

  @Test
  void runsAndLoadsStartedInAQuietWindow_waitForItToClose_soTheLoadInItIsClean() throws Exception {
    MemoryMeter.Quiet quiet = MemoryMeter.quiet(TimeUnit.SECONDS.toNanos(5));
    assertThat(quiet.opened()).isTrue();
    MemoryMeter.Probe probe = MemoryMeter.startLoad(); // this thread's own load goes through
    Async<Void> run =
        Async.run(
            "run",
            () -> {
              MemoryMeter.runStarted();
              MemoryMeter.runEnded();
            });
    Async<Void> load = Async.run("other load", () -> MemoryMeter.startLoad().end());
    Async<Void> unload =
        Async.run(
            "unload",
            () -> {
              MemoryMeter.unloadStarted();
              MemoryMeter.unloadEnded();
            });
    MemoryMeter.Reading r;
    try {
      for (Async<Void> other : List.of(run, load, unload)) {
        other.awaitBlockedOrDone();
        assertThat(other.isDone()).as(other.thread().getName() + " waits").isFalse();
      }
      r = probe.end();
    } finally {
      quiet.close();
    }
    run.join();
    load.join();
    unload.join();
    assertThat(r.clean()).as("nothing else started during the window").isTrue();
    quiet.close(); // idempotent
    assertThat(MemoryMeter.quietElsewhere()).isFalse();
  }

  @Test
  void aQuietWindow_waitsForTheRunsInProgress_andOpensNothingWhenTheyOutlastItsWait()
      throws Exception {
    MemoryMeter.runStarted();
    MemoryMeter.Quiet refused;
    try {
      refused = MemoryMeter.quiet(TimeUnit.MILLISECONDS.toNanos(20));
    } finally {
      MemoryMeter.runEnded();
    }
    assertThat(refused.opened()).isFalse();
    Async<Void> run = Async.run("run", () -> MemoryMeter.runStarted());
    run.join();
    assertThat(MemoryMeter.quietElsewhere())
        .as("a window that did not open holds nothing")
        .isFalse();
    MemoryMeter.runEnded();
    try (MemoryMeter.Quiet quiet = MemoryMeter.quiet(TimeUnit.SECONDS.toNanos(5))) {
      assertThat(quiet.opened()).isTrue();
    }
  }
}
