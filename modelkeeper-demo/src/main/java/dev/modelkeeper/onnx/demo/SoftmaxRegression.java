package dev.modelkeeper.onnx.demo;

/**
 * Multinomial logistic regression trained by full-batch gradient descent on standardized features,
 * deterministic (zero initial weights, fixed step count). The trained weights act on raw
 * (unstandardized) features: {@code logits = x · weights + bias}. Immutable and thread-safe once
 * trained.
 */
public final class SoftmaxRegression {

  private final float[] weights; // [features x classes], row-major
  private final float[] bias; // [classes]
  private final int features;
  private final int classes;

  private SoftmaxRegression(float[] weights, float[] bias, int features, int classes) {
    this.weights = weights;
    this.bias = bias;
    this.features = features;
    this.classes = classes;
  }

  /**
   * Trains on {@code x} (rows of features) and {@code y} (class indices below {@code classes}).
   *
   * @param steps gradient steps over the full batch
   * @param learningRate the step size on standardized features
   * @param l2 the L2 penalty on the weights
   */
  public static SoftmaxRegression train(
      float[][] x, int[] y, int classes, int steps, double learningRate, double l2) {
    int n = x.length;
    int d = x[0].length;
    double[] mean = new double[d];
    double[] std = new double[d];
    for (float[] row : x) {
      for (int j = 0; j < d; j++) {
        mean[j] += row[j];
      }
    }
    for (int j = 0; j < d; j++) {
      mean[j] /= n;
    }
    for (float[] row : x) {
      for (int j = 0; j < d; j++) {
        std[j] += (row[j] - mean[j]) * (row[j] - mean[j]);
      }
    }
    for (int j = 0; j < d; j++) {
      std[j] = Math.sqrt(std[j] / n);
    }
    double[][] z = new double[n][d];
    for (int i = 0; i < n; i++) {
      for (int j = 0; j < d; j++) {
        z[i][j] = (x[i][j] - mean[j]) / std[j];
      }
    }
    double[][] w = new double[d][classes];
    double[] b = new double[classes];
    double[] p = new double[classes];
    for (int step = 0; step < steps; step++) {
      double[][] gw = new double[d][classes];
      double[] gb = new double[classes];
      for (int i = 0; i < n; i++) {
        softmax(z[i], w, b, p);
        for (int k = 0; k < classes; k++) {
          double err = p[k] - (y[i] == k ? 1 : 0);
          gb[k] += err;
          for (int j = 0; j < d; j++) {
            gw[j][k] += err * z[i][j];
          }
        }
      }
      for (int k = 0; k < classes; k++) {
        b[k] -= learningRate * gb[k] / n;
        for (int j = 0; j < d; j++) {
          w[j][k] -= learningRate * (gw[j][k] / n + l2 * w[j][k]);
        }
      }
    }
    // fold the standardization in: x·(w/std) + (b - sum_j mean_j/std_j * w_j)
    float[] rawW = new float[d * classes];
    float[] rawB = new float[classes];
    for (int k = 0; k < classes; k++) {
      double bk = b[k];
      for (int j = 0; j < d; j++) {
        rawW[j * classes + k] = (float) (w[j][k] / std[j]);
        bk -= mean[j] / std[j] * w[j][k];
      }
      rawB[k] = (float) bk;
    }
    return new SoftmaxRegression(rawW, rawB, d, classes);
  }

  /** A copy of the weights, {@code [features x classes]} row-major, for raw features. */
  public float[] weights() {
    return weights.clone();
  }

  /** A copy of the bias, one per class. */
  public float[] bias() {
    return bias.clone();
  }

  public int features() {
    return features;
  }

  public int classes() {
    return classes;
  }

  /** Class probabilities of one row of raw features. */
  public double[] probabilities(float[] row) {
    double[] logits = new double[classes];
    for (int k = 0; k < classes; k++) {
      double s = bias[k];
      for (int j = 0; j < features; j++) {
        s += row[j] * weights[j * classes + k];
      }
      logits[k] = s;
    }
    double max = Double.NEGATIVE_INFINITY;
    for (double l : logits) {
      max = Math.max(max, l);
    }
    double sum = 0;
    for (int k = 0; k < classes; k++) {
      logits[k] = Math.exp(logits[k] - max);
      sum += logits[k];
    }
    for (int k = 0; k < classes; k++) {
      logits[k] /= sum;
    }
    return logits;
  }

  /** The most probable class of one row of raw features. */
  public int predict(float[] row) {
    double[] p = probabilities(row);
    int best = 0;
    for (int k = 1; k < p.length; k++) {
      if (p[k] > p[best]) {
        best = k;
      }
    }
    return best;
  }

  private static void softmax(double[] z, double[][] w, double[] b, double[] out) {
    int classes = b.length;
    double max = Double.NEGATIVE_INFINITY;
    for (int k = 0; k < classes; k++) {
      double s = b[k];
      for (int j = 0; j < z.length; j++) {
        s += z[j] * w[j][k];
      }
      out[k] = s;
      max = Math.max(max, s);
    }
    double sum = 0;
    for (int k = 0; k < classes; k++) {
      out[k] = Math.exp(out[k] - max);
      sum += out[k];
    }
    for (int k = 0; k < classes; k++) {
      out[k] /= sum;
    }
  }
}
