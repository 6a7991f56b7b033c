package dev.modelkeeper.server;

import dev.modelkeeper.onnx.Datatype;
import dev.modelkeeper.onnx.InvalidInputException;
import dev.modelkeeper.onnx.ModelMetadata;
import dev.modelkeeper.onnx.Tensor;
import dev.modelkeeper.onnx.TensorSpec;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Triton's classification extension: an output asked for with {@code classification: k} is answered
 * as its k highest values, highest first, each as the BYTES string {@code "value:index:label"}
 * ({@code "value:index"} when the output has no label for that index). The output of a batching
 * model is ranked per row ({@code [rows, k]}); any other output as a whole ({@code [k]}). k past
 * the number of values answers them all. Stateless.
 */
final class Classification {

  private Classification() {}

  /**
   * {@code outputs} with each output named in {@code classes} replaced by its top classes.
   *
   * @param labels the class labels per output of the model's configuration
   * @throws InvalidInputException when a classified output does not hold numbers
   */
  static Map<String, Tensor> apply(
      Map<String, Tensor> outputs,
      Map<String, Integer> classes,
      ModelMetadata metadata,
      Map<String, List<String>> labels) {
    if (classes.isEmpty()) {
      return outputs;
    }
    Map<String, Tensor> out = new LinkedHashMap<>(outputs);
    for (Map.Entry<String, Integer> e : classes.entrySet()) {
      Tensor t = outputs.get(e.getKey());
      if (t != null) {
        boolean perRow =
            metadata
                .output(t.name())
                .map(s -> s.shape().size() >= 2 && s.shape().get(0) < 0)
                .orElse(false);
        out.put(t.name(), top(t, e.getValue(), perRow, labels.getOrDefault(t.name(), List.of())));
      }
    }
    return out;
  }

  private static Tensor top(Tensor t, int k, boolean perRow, List<String> labels) {
    if (t.datatype() == Datatype.BYTES || t.datatype() == Datatype.BOOL) {
      throw new InvalidInputException(
          "output '"
              + t.name()
              + "' holds "
              + t.datatype()
              + " values; classification ranks numbers");
    }
    int rows = perRow && t.shape().length > 0 ? (int) t.shape()[0] : 1;
    int n = rows == 0 ? 0 : t.elementCount() / rows;
    int kept = Math.min(k, n);
    String[] strings = new String[rows * kept];
    Integer[] order = new Integer[n];
    for (int r = 0; r < rows; r++) {
      int base = r * n;
      for (int i = 0; i < n; i++) {
        order[i] = i;
      }
      Arrays.sort(order, (a, b) -> Double.compare(value(t, base + b), value(t, base + a)));
      for (int j = 0; j < kept; j++) {
        int i = order[j];
        Object v = t.get(base + i);
        strings[r * kept + j] = v + ":" + i + (i < labels.size() ? ":" + labels.get(i) : "");
      }
    }
    long[] shape = perRow && t.shape().length > 0 ? new long[] {rows, kept} : new long[] {kept};
    return Tensor.of(t.name(), Datatype.BYTES, shape, strings);
  }

  private static double value(Tensor t, int i) {
    return ((Number) t.get(i)).doubleValue();
  }

  /** The class labels of each output of {@code spec}'s model, from its configuration. */
  static Map<String, List<String>> labels(
      List<TensorSpec> outputs, List<String> modelLabels, Map<String, List<String>> declared) {
    Map<String, List<String>> out = new LinkedHashMap<>();
    for (TensorSpec s : outputs) {
      List<String> l = declared.get(s.name());
      out.put(s.name(), l != null && !l.isEmpty() ? l : modelLabels);
    }
    return out;
  }
}
