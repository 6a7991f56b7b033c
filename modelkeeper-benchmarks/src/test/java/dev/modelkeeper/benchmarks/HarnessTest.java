package dev.modelkeeper.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.modelkeeper.benchmarks.FakeWorld.FakeModel;
import dev.modelkeeper.core.ModelNotLoadedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Sanity checks of the harness logic only; the benchmarks themselves never run in the test suite.
 */
class HarnessTest {

  @Test
  void zipf_probabilities_decreaseAndSumToOne() {
    Zipf z = new Zipf(64, 0.99);
    double sum = 0;
    for (int k = 0; k < 64; k++) {
      sum += z.probability(k);
      if (k > 0) {
        assertThat(z.probability(k)).isLessThan(z.probability(k - 1));
      }
    }
    assertThat(sum).isCloseTo(1.0, within(1e-9));
  }

  @Test
  void zipf_sampledFrequencies_matchProbabilities() {
    Zipf z = new Zipf(64, 0.99);
    int[] ranks = z.ranks(200_000, 7);
    int[] counts = new int[64];
    for (int r : ranks) {
      counts[r]++;
    }
    assertThat(counts[0] / 200_000.0).isCloseTo(z.probability(0), within(0.01));
    assertThat(counts[63] / 200_000.0).isCloseTo(z.probability(63), within(0.002));
  }

  @Test
  void zipf_keys_useEveryKeyAndOnlyThem() {
    String[] ids = HotPathBenchmark.ids();
    String[] seq = new Zipf(64, 0.99).keys(ids, 1 << 16, 1);
    assertThat(List.of(seq)).containsOnly(ids).contains(ids);
  }

  @Test
  void percentile_nearestRank() {
    long[] sorted = {10, 20, 30, 40, 50, 60, 70, 80, 90, 100};
    assertThat(Latencies.percentile(sorted, 50)).isEqualTo(50);
    assertThat(Latencies.percentile(sorted, 95)).isEqualTo(100);
    assertThat(Latencies.percentile(sorted, 10)).isEqualTo(10);
    assertThat(Latencies.percentile(new long[0], 99)).isZero();
  }

  @Test
  void latencies_mergeSorted_keepsEveryValue() {
    Latencies a = new Latencies();
    Latencies b = new Latencies();
    for (int i = 0; i < 3000; i++) {
      a.record(3000 - i);
      b.record(i);
    }
    long[] all = Latencies.mergeSorted(List.of(a, b));
    assertThat(all).hasSize(6000);
    assertThat(all[0]).isZero();
    assertThat(all[5999]).isEqualTo(3000);
  }

  @Test
  void ratio_rangeComesFromBothIntervals() {
    double[] q =
        Report.ratio(
            new HotPath.Figure("a", "zipf", 2, 20, 18, 22, 24),
            new HotPath.Figure("b", "zipf", 2, 10, 9, 11, 24));
    assertThat(q[0]).isCloseTo(2.0, within(1e-9));
    assertThat(q[1]).isCloseTo(18.0 / 11, within(1e-9));
    assertThat(q[2]).isCloseTo(22.0 / 9, within(1e-9));
  }

  @Test
  void medianInterval_usesOrderStatistics() {
    double[] values = new double[24];
    for (int i = 0; i < values.length; i++) {
      values[i] = 24 - i; // 24 .. 1, unsorted on purpose
    }
    double[] m = Stats.medianWithInterval(values, 0.99);
    assertThat(m[0]).isEqualTo(12.5);
    // n = 24 at 99%: the interval runs from the 6th to the 19th smallest value
    assertThat(m[1]).isEqualTo(6);
    assertThat(m[2]).isEqualTo(19);
    assertThat(Stats.medianWithInterval(new double[] {5, 1, 3}, 0.99)).containsExactly(3, 1, 5);
  }

  @Test
  void binomialHalf_sumsToOne() {
    double sum = 0;
    for (int j = 0; j <= 24; j++) {
      sum += Stats.binomialHalf(24, j);
    }
    assertThat(sum).isCloseTo(1.0, within(1e-12));
  }

  @Test
  void withSections_appendsEveryBenchFileVerbatimInNameOrder(@TempDir Path docs) throws Exception {
    Path bench = Files.createDirectories(docs.resolve("bench"));
    Files.writeString(bench.resolve("protocols.md"), "## Protocols\n\nfigures\n");
    Files.writeString(bench.resolve("batching.md"), "## Batching\n\nmore figures");
    Files.writeString(bench.resolve("notes.txt"), "not a section");

    String out = Report.withSections("# ModelKeeper benchmarks\n", bench);

    assertThat(out)
        .isEqualTo(
            "# ModelKeeper benchmarks\n\n## Batching\n\nmore figures\n\n## Protocols\n\nfigures\n");
    assertThat(Report.withSections("# only\n", docs.resolve("missing"))).isEqualTo("# only\n");
  }

  @Test
  void putSection_replacesInPlaceOrAppends(@TempDir Path docs) throws Exception {
    Path file = docs.resolve("BENCHMARKS.md");
    Report.putSection(file, "## Protocols\n\nfirst");
    assertThat(Files.readString(file)).isEqualTo("## Protocols\n\nfirst\n");

    Files.writeString(file, "# Top\n\n## Protocols\n\nold\n\n## Batching\n\nkept\n");
    Report.putSection(file, "## Protocols\n\nnew\n");
    assertThat(Files.readString(file))
        .isEqualTo("# Top\n\n## Protocols\n\nnew\n\n## Batching\n\nkept\n");

    Report.putSection(file, "## Scale-out\n\nlast\n");
    assertThat(Files.readString(file))
        .isEqualTo("# Top\n\n## Protocols\n\nnew\n\n## Batching\n\nkept\n\n## Scale-out\n\nlast\n");
  }

  @Test
  void median_ofEvenAndOdd() {
    assertThat(Report.median(new double[] {3, 1, 2})).isEqualTo(2);
    assertThat(Report.median(new double[] {4, 1, 2, 3})).isEqualTo(2.5);
  }

  @Test
  void oneLockLru_evictsLeastRecentlyUsed_andClearsIt() {
    FakeWorld world = new FakeWorld(0);
    OneLockLru lru = new OneLockLru(world, 2);
    lru.addModel("a");
    lru.addModel("b");
    FakeModel a = (FakeModel) lru.get("a"); // a is now the most recently used
    FakeModel b = (FakeModel) lru.get("b");
    lru.get("a");
    lru.addModel("c");
    assertThat(b.isCleared()).isTrue();
    assertThat(a.isCleared()).isFalse();
    assertThatThrownBy(() -> lru.get("b")).isInstanceOf(ModelNotLoadedException.class);
    assertThat(world.counters().constructorCalls()).isEqualTo(3);
  }

  @Test
  void fakeModel_work_reportsClearedModel() {
    FakeWorld world = new FakeWorld(0);
    FakeModel m = world.create("x");
    assertThat(m.work(0)).isTrue();
    m.clearCache();
    assertThat(m.work(0)).isFalse();
    assertThat(world.counters().clearedInUse()).isEqualTo(1);
    assertThat(world.counters().clears()).isEqualTo(1);
  }

  @Test
  void cpuSample_othersShare_isAFraction() {
    CpuSample before = CpuSample.now();
    double share = CpuSample.now().othersShareSince(before);
    assertThat(Double.isNaN(share) || (share >= 0 && share <= 1)).isTrue();
  }
}
