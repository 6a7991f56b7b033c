package dev.modelkeeper.onnx.demo;

import dev.modelkeeper.onnx.Datatype;
import dev.modelkeeper.onnx.writer.FloatGenerator;
import dev.modelkeeper.onnx.writer.OnnxGraphBuilder;
import java.util.List;

/**
 * A small convolutional image classifier with seeded random weights, heavy enough that a single run
 * costs milliseconds (so serving overhead no longer hides the model) and shaped like the image
 * models servers batch: {@code image} FP32 {@code [-1, 3, 64, 64]} through three blocks of 3×3
 * convolution, ReLU and 2×2 max pooling (8, 16 and 32 channels), a dense layer of {@value #HIDDEN}
 * units with ReLU and a dense layer of {@value #CLASSES} classes, to {@code probabilities} FP32
 * {@code [-1, 10]} (softmax) and {@code label} INT64 {@code [-1]} (arg max).
 *
 * <p>As in most image classifiers, the dense head holds almost all the weights (64 MiB, more than a
 * processor's caches hold), so a single-row run (1 to 2 ms here) is bound by reading them, and one
 * batched run reads them once for all its rows. Stateless and thread-safe; the builder {@link
 * #graph} returns generates the weights while the model is written, so writing holds none of them.
 */
public final class ConvNet {

  /** The input tensor name. */
  public static final String INPUT = "image";

  /** The softmax output. */
  public static final String PROBABILITIES = "probabilities";

  /** The arg-max output. */
  public static final String LABEL = "label";

  /** Input channels, height and width. */
  public static final int CHANNELS = 3;

  public static final int SIZE = 64;

  /** Units of the hidden dense layer. */
  public static final int HIDDEN = 8192;

  /** Output classes. */
  public static final int CLASSES = 10;

  private static final int[] FILTERS = {8, 16, 32};

  private ConvNet() {}

  /**
   * The ONNX graph, with weights drawn (He-style, ±√(6/fan-in)) by a generator seeded with {@code
   * seed}, in the order of the initializers. The weights are drawn each time the builder writes the
   * model.
   */
  public static OnnxGraphBuilder graph(String graphName, long seed) {
    SeededDraws random = new SeededDraws(seed);
    OnnxGraphBuilder g =
        new OnnxGraphBuilder(graphName)
            .docString("convolutional image classifier 3x64x64 -> 10 with random weights")
            .input(INPUT, Datatype.FP32, -1, CHANNELS, SIZE, SIZE);
    String x = INPUT;
    int channels = CHANNELS;
    int size = SIZE;
    for (int b = 0; b < FILTERS.length; b++) {
      int out = FILTERS[b];
      g.initializer(
          "conv" + b + "_w",
          new long[] {out, channels, 3, 3},
          uniform(random, out * channels * 9, channels * 9));
      g.initializer("conv" + b + "_b", new long[] {out}, uniform(random, out, 100));
      g.node(
          "Conv",
          List.of(x, "conv" + b + "_w", "conv" + b + "_b"),
          List.of("conv" + b),
          OnnxGraphBuilder.intsAttr("kernel_shape", 3, 3),
          OnnxGraphBuilder.intsAttr("pads", 1, 1, 1, 1));
      g.node("Relu", List.of("conv" + b), List.of("relu" + b));
      g.node(
          "MaxPool",
          List.of("relu" + b),
          List.of("pool" + b),
          OnnxGraphBuilder.intsAttr("kernel_shape", 2, 2),
          OnnxGraphBuilder.intsAttr("strides", 2, 2));
      x = "pool" + b;
      channels = out;
      size /= 2;
    }
    int flat = channels * size * size;
    g.node("Flatten", List.of(x), List.of("flat"), OnnxGraphBuilder.intAttr("axis", 1));
    dense(g, random, "fc0", "flat", flat, HIDDEN);
    g.node("Relu", List.of("fc0"), List.of("hidden"));
    dense(g, random, "fc1", "hidden", HIDDEN, CLASSES);
    g.node("Softmax", List.of("fc1"), List.of(PROBABILITIES), OnnxGraphBuilder.intAttr("axis", 1));
    g.node(
        "ArgMax",
        List.of("fc1"),
        List.of(LABEL),
        OnnxGraphBuilder.intAttr("axis", 1),
        OnnxGraphBuilder.intAttr("keepdims", 0));
    return g.output(PROBABILITIES, Datatype.FP32, -1, CLASSES).output(LABEL, Datatype.INT64, -1);
  }

  /** {@code out = in · Wᵀ + b} as one Gemm with a {@code [units, fanIn]} weight. */
  private static void dense(
      OnnxGraphBuilder g, SeededDraws random, String name, String in, int fanIn, int units) {
    g.initializer(name + "_w", new long[] {units, fanIn}, uniform(random, units * fanIn, fanIn));
    g.initializer(name + "_b", new long[] {units}, uniform(random, units, 100));
    g.node(
        "Gemm",
        List.of(in, name + "_w", name + "_b"),
        List.of(name),
        OnnxGraphBuilder.intAttr("transB", 1));
  }

  private static FloatGenerator uniform(SeededDraws random, int count, int fanIn) {
    return random.uniform(count, Math.sqrt(6.0 / fanIn));
  }
}
