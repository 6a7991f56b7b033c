package dev.modelkeeper.benchmarks;

import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * Zipf-distributed key sequences, precomputed so that drawing a key on the hot path costs one array
 * read. Immutable and thread-safe; each thread takes its own sequence with its own seed.
 */
final class Zipf {

  private final double[] cdf;

  /** Ranks {@code 0..n-1}; rank {@code k} has weight {@code 1 / (k + 1)^exponent}. */
  Zipf(int n, double exponent) {
    if (n < 1 || !(exponent >= 0)) {
      throw new IllegalArgumentException(
          "need n >= 1 and exponent >= 0, got " + n + ", " + exponent);
    }
    cdf = new double[n];
    double sum = 0;
    for (int k = 0; k < n; k++) {
      sum += 1 / Math.pow(k + 1, exponent);
      cdf[k] = sum;
    }
    for (int k = 0; k < n; k++) {
      cdf[k] /= sum;
    }
    cdf[n - 1] = 1.0;
  }

  /** The probability of rank {@code k}. */
  double probability(int k) {
    return k == 0 ? cdf[0] : cdf[k] - cdf[k - 1];
  }

  /** {@code length} ranks drawn independently with {@code seed}. */
  int[] ranks(int length, long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    int[] out = new int[length];
    for (int i = 0; i < length; i++) {
      int at = Arrays.binarySearch(cdf, random.nextDouble());
      out[i] = at >= 0 ? at : -at - 1;
    }
    return out;
  }

  /**
   * A key sequence over {@code keys}: ranks are mapped through a fixed shuffle so that the hottest
   * keys are not neighbours in hash order.
   */
  String[] keys(String[] keys, int length, long seed) {
    if (keys.length != cdf.length) {
      throw new IllegalArgumentException(keys.length + " keys for " + cdf.length + " ranks");
    }
    String[] byRank = keys.clone();
    SplittableRandom shuffle = new SplittableRandom(0x5EED);
    for (int i = byRank.length - 1; i > 0; i--) {
      int j = shuffle.nextInt(i + 1);
      String t = byRank[i];
      byRank[i] = byRank[j];
      byRank[j] = t;
    }
    int[] ranks = ranks(length, seed);
    String[] out = new String[length];
    for (int i = 0; i < length; i++) {
      out[i] = byRank[ranks[i]];
    }
    return out;
  }
}
