package dev.modelkeeper.onnx.demo;

import dev.modelkeeper.onnx.Datatype;
import dev.modelkeeper.onnx.writer.OnnxGraphBuilder;
import java.util.List;

/**
 * The {@code iris} demo model: a softmax regression trained on {@link IrisDataset} by {@link
 * #train()}, exported as {@code input} FP32 {@code [-1, 4]} (sepal length, sepal width, petal
 * length, petal width in cm) to {@code probabilities} FP32 {@code [-1, 3]} and {@code label} INT64
 * {@code [-1]} (0 setosa, 1 versicolor, 2 virginica). Stateless and thread-safe.
 */
public final class IrisClassifier {

  public static final String INPUT = "input";
  public static final String PROBABILITIES = "probabilities";
  public static final String LABEL = "label";

  private IrisClassifier() {}

  /** Trains the classifier on all 150 rows; deterministic. */
  public static SoftmaxRegression train() {
    IrisDataset data = IrisDataset.get();
    float[][] x = new float[data.size()][];
    int[] y = new int[data.size()];
    for (int i = 0; i < data.size(); i++) {
      x[i] = data.features(i);
      y[i] = data.label(i);
    }
    return SoftmaxRegression.train(x, y, IrisDataset.SPECIES.size(), 2000, 0.5, 1e-4);
  }

  /** The ONNX graph of a trained classifier. */
  public static OnnxGraphBuilder graph(SoftmaxRegression model) {
    int d = model.features();
    int k = model.classes();
    return new OnnxGraphBuilder("iris")
        .docString("Iris species classifier: softmax regression trained on Fisher's Iris data")
        .input(INPUT, Datatype.FP32, -1, d)
        .initializer("W", new long[] {d, k}, model.weights())
        .initializer("B", new long[] {k}, model.bias())
        .node("MatMul", List.of(INPUT, "W"), List.of("xw"))
        .node("Add", List.of("xw", "B"), List.of("logits"))
        .node(
            "Softmax",
            List.of("logits"),
            List.of(PROBABILITIES),
            OnnxGraphBuilder.intAttr("axis", 1))
        .node(
            "ArgMax",
            List.of("logits"),
            List.of(LABEL),
            OnnxGraphBuilder.intAttr("axis", 1),
            OnnxGraphBuilder.intAttr("keepdims", 0))
        .output(PROBABILITIES, Datatype.FP32, -1, k)
        .output(LABEL, Datatype.INT64, -1);
  }
}
