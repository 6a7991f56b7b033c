package dev.modelkeeper.server.observability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.modelkeeper.core.RemovalCause;
import dev.modelkeeper.server.errors.PathRedaction;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** Rates, percentiles and events of the status board, from readings it is handed. */
class StatusBoardTest {

  private static final double[] BOUNDS = {1, 2, 5, 10};

  private static ServerMetrics.Histogram histogram(long... cumulative) {
    return new ServerMetrics.Histogram(cumulative[cumulative.length - 1], BOUNDS, cumulative);
  }

  /** A clock the test moves by hand. */
  private static final class HandClock extends Clock {
    long millis = 1_000_000;

    @Override
    public ZoneOffset getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
      return this;
    }

    @Override
    public Instant instant() {
      return Instant.ofEpochMilli(millis);
    }
  }

  @Test
  void view_ratesAndP99_areDifferencesOverTheLastTenSeconds() {
    AtomicReference<ServerMetrics.Activity> totals =
        new AtomicReference<>(
            new ServerMetrics.Activity(
                500,
                Map.of(
                    "m/1",
                    new ServerMetrics.ModelTotals(
                        histogram(0, 0, 400, 400), ServerMetrics.Histogram.EMPTY, 0))));
    HandClock clock = new HandClock();
    StatusBoard board = new StatusBoard(totals::get, () -> 100L << 20, clock, PathRedaction.NONE);
    board.sample();
    // in the next 10 s: 200 requests, 100 runs of which 98 within 1 ms and 2 within 10 ms
    for (int second = 1; second <= 10; second++) {
      clock.millis += 1000;
      long runs = 10L * second;
      long slow = second == 10 ? 2 : 0;
      totals.set(
          new ServerMetrics.Activity(
              500 + 20L * second,
              Map.of(
                  "m/1",
                  new ServerMetrics.ModelTotals(
                      histogram(runs - slow, runs - slow, 400 + runs - slow, 400 + runs),
                      ServerMetrics.Histogram.EMPTY,
                      3))));
      board.sample();
    }
    StatusBoard.View v = board.view();
    assertThat(v.requestsPerSecond()).isEqualTo(20.0);
    assertThat(v.history())
        .hasSize(10)
        .allSatisfy(p -> assertThat(p.requestsPerSecond()).isEqualTo(20.0));
    StatusBoard.ModelActivity m = v.models().get("m/1");
    assertThat(m.runsPerSecond()).isEqualTo(10.0);
    assertThat(m.queueDepth()).isEqualTo(3);
    assertThat(m.p99RunMillis()).hasValue(10.0); // 98 of 100 within 1 ms: the 99th is slower
    assertThat(m.p99QueueMillis()).isEmpty();
  }

  @Test
  void p99_beyondTheLastBucket_isInfinite_andWithinTheFirst_isItsBound() {
    ServerMetrics.Histogram before = histogram(0, 0, 0, 0);
    ServerMetrics.Histogram after =
        new ServerMetrics.Histogram(100, BOUNDS, new long[] {99, 99, 99, 99});
    assertThat(StatusBoard.p99(before, after)).hasValue(1.0);
    ServerMetrics.Histogram slow =
        new ServerMetrics.Histogram(100, BOUNDS, new long[] {50, 60, 70, 80});
    assertThat(StatusBoard.p99(before, slow).getAsDouble()).isInfinite();
  }

  @Test
  void events_newestFirst_atMostTwenty() {
    StatusBoard board =
        new StatusBoard(
            () -> new ServerMetrics.Activity(0, Map.of()),
            () -> -1L,
            new HandClock(),
            PathRedaction.NONE);
    for (int i = 0; i < 25; i++) {
      board.loaded("m" + i + "/1", null, 1 << 20, 2_000_000);
    }
    board.removed("m24/1", null, RemovalCause.BYTE_BUDGET);
    StatusBoard.View v = board.view();
    assertThat(v.recent()).hasSize(StatusBoard.EVENTS);
    assertThat(v.recent().get(0).what()).isEqualTo("evicted");
    assertThat(v.recent().get(0).detail()).isEqualTo("byte budget");
    assertThat(v.recent().get(1).modelId()).isEqualTo("m24/1");
    assertThat(v.recent().get(1).detail()).isEqualTo("1.0 MiB in 0.00 s");
  }
}
