package dev.modelkeeper.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.modelkeeper.benchmarks.FakeWorld.FakeModel;
import dev.modelkeeper.core.ModelNotLoadedException;
import java.util.List;
import org.junit.jupiter.api.Test;

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
}
