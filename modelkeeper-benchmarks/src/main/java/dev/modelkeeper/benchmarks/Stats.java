package dev.modelkeeper.benchmarks;

import java.util.Arrays;

/**
 * Robust summaries of benchmark samples: the median and a distribution-free confidence interval for
 * it from order statistics, so that bursts of background load on a shared machine (which only ever
 * slow an iteration down) move the figure less than they move a mean. Stateless and thread-safe.
 */
final class Stats {

  private Stats() {}

  /**
   * {@code {median, low, high}} of {@code values}; the interval covers the true median with {@code
   * confidence}.
   */
  static double[] medianWithInterval(double[] values, double confidence) {
    if (values.length == 0) {
      return new double[] {Double.NaN, Double.NaN, Double.NaN};
    }
    double[] s = values.clone();
    Arrays.sort(s);
    int n = s.length;
    double median = n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    double tail = (1 - confidence) / 2;
    // the largest k with P(Binomial(n, 1/2) <= k - 1) <= tail; the interval is [x(k), x(n - k + 1)]
    int k = 0;
    double cumulative = 0;
    for (int j = 0; j < n; j++) {
      cumulative += binomialHalf(n, j);
      if (cumulative > tail) {
        break;
      }
      k = j + 1;
    }
    if (k == 0) {
      return new double[] {median, s[0], s[n - 1]};
    }
    return new double[] {median, s[k - 1], s[n - k]};
  }

  /** P(X = j) for X ~ Binomial(n, 1/2). */
  static double binomialHalf(int n, int j) {
    double logChoose = 0;
    for (int i = 1; i <= j; i++) {
      logChoose += Math.log(n - j + i) - Math.log(i);
    }
    return Math.exp(logChoose - n * Math.log(2));
  }
}
