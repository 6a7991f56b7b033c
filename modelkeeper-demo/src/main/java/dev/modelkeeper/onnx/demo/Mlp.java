package dev.modelkeeper.onnx.demo;

import dev.modelkeeper.onnx.Datatype;
import dev.modelkeeper.onnx.writer.OnnxGraphBuilder;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * A multilayer perceptron with seeded random weights: {@code input} FP32 {@code [-1, sizes[0]]}
 * through dense layers with ReLU between them to {@code output} FP32 {@code [-1, sizes[last]]}.
 * Used for churn and memory tests, where the weight count sets the model size. Immutable and
 * thread-safe.
 */
public final class Mlp {

  /** The input tensor name. */
  public static final String INPUT = "input";

  /** The output tensor name. */
  public static final String OUTPUT = "output";

  private final int[] sizes;
  private final float[][] weights; // layer l: [sizes[l] x sizes[l+1]] row-major
  private final float[][] biases;

  private Mlp(int[] sizes, float[][] weights, float[][] biases) {
    this.sizes = sizes;
    this.weights = weights;
    this.biases = biases;
  }

  /**
   * An MLP with layer widths {@code sizes} (input first, output last) and weights drawn uniformly
   * from ±1/√fan-in by a generator seeded with {@code seed}; the same arguments give the same
   * weights.
   */
  public static Mlp random(long seed, int... sizes) {
    if (sizes.length < 2) {
      throw new IllegalArgumentException("an MLP needs at least an input and an output width");
    }
    for (int s : sizes) {
      if (s < 1) {
        throw new IllegalArgumentException(
            "layer widths must be positive: " + Arrays.toString(sizes));
      }
    }
    SplittableRandom random = new SplittableRandom(seed);
    int layers = sizes.length - 1;
    float[][] w = new float[layers][];
    float[][] b = new float[layers][];
    for (int l = 0; l < layers; l++) {
      int in = sizes[l];
      int out = sizes[l + 1];
      double bound = 1.0 / Math.sqrt(in);
      long count = (long) in * out;
      if (count > Integer.MAX_VALUE - 8) {
        throw new IllegalArgumentException("layer " + l + " is too large");
      }
      w[l] = new float[(int) count];
      for (int i = 0; i < w[l].length; i++) {
        w[l][i] = (float) random.nextDouble(-bound, bound);
      }
      b[l] = new float[out];
      for (int i = 0; i < out; i++) {
        b[l][i] = (float) random.nextDouble(-0.1, 0.1);
      }
    }
    return new Mlp(sizes.clone(), w, b);
  }

  /**
   * An MLP {@code 256 -> h -> 16} whose FP32 weights take about {@code bytes} bytes (at least one
   * hidden unit).
   */
  public static Mlp ofApproxBytes(long bytes, long seed) {
    long perHidden = (256L + 1 + 16) * 4;
    long hidden = Math.max(1, (bytes - 16L * 4) / perHidden);
    if (hidden > Integer.MAX_VALUE / 256) {
      throw new IllegalArgumentException("too large: " + bytes + " bytes");
    }
    return random(seed, 256, (int) hidden, 16);
  }

  /** A copy of the layer widths, input first. */
  public int[] sizes() {
    return sizes.clone();
  }

  public int layers() {
    return weights.length;
  }

  /** A copy of layer {@code l}'s weights, {@code [sizes[l] x sizes[l+1]]} row-major. */
  public float[] weights(int l) {
    return weights[l].clone();
  }

  /** A copy of layer {@code l}'s bias. */
  public float[] bias(int l) {
    return biases[l].clone();
  }

  /** The number of weights and biases. */
  public long parameterCount() {
    long n = 0;
    for (int l = 0; l < weights.length; l++) {
      n += weights[l].length + biases[l].length;
    }
    return n;
  }

  /** The ONNX graph of this MLP. */
  public OnnxGraphBuilder toOnnx(String graphName) {
    OnnxGraphBuilder g =
        new OnnxGraphBuilder(graphName)
            .docString("multilayer perceptron " + Arrays.toString(sizes) + " with random weights")
            .input(INPUT, Datatype.FP32, -1, sizes[0]);
    String x = INPUT;
    for (int l = 0; l < weights.length; l++) {
      String w = "W" + l;
      String b = "B" + l;
      g.initializer(w, new long[] {sizes[l], sizes[l + 1]}, weights[l]);
      g.initializer(b, new long[] {sizes[l + 1]}, biases[l]);
      boolean last = l == weights.length - 1;
      String product = "matmul" + l;
      String sum = last ? OUTPUT : "dense" + l;
      g.node("MatMul", List.of(x, w), List.of(product));
      g.node("Add", List.of(product, b), List.of(sum));
      if (!last) {
        String act = "relu" + l;
        g.node("Relu", List.of(sum), List.of(act));
        x = act;
      }
    }
    return g.output(OUTPUT, Datatype.FP32, -1, sizes[sizes.length - 1]);
  }

  /** Writes this MLP as an ONNX model file (atomically) and returns the file. */
  public Path writeTo(Path file) {
    return toOnnx("mlp").writeTo(file);
  }
}
