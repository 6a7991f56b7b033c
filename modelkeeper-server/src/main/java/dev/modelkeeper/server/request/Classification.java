package dev.modelkeeper.server.request;

import dev.modelkeeper.onnx.Datatype;
import dev.modelkeeper.onnx.InferenceModel;
import dev.modelkeeper.onnx.InvalidInputException;
import dev.modelkeeper.onnx.Tensor;
import dev.modelkeeper.onnx.TensorConfig;
import dev.modelkeeper.onnx.TensorSpec;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Triton's classification extension: an output asked for with {@code classification: k} is answered
 * as its k highest values, highest first, each as the BYTES string {@code "value:index:label"}
 * ({@code "value:index"} when the output has no label for that index). The output of a batching
 * model is ranked per row ({@code [rows, k]}); any other output as a whole ({@code [k]}). k past
 * the number of values answers them all. Stateless.
 */
public final class Classification {

  /** For a model not known yet: no labels, every output ranked as a whole. */
  public static final Classification NONE = new Classification(Map.of(), Set.of());

  private final Map<String, List<String>> labels;
  private final Set<String> perRow;

  /**
   * @param labels the class labels per output
   * @param perRow the outputs ranked per row (their first dimension is a batch)
   */
  private Classification(Map<String, List<String>> labels, Set<String> perRow) {
    this.labels = labels;
    this.perRow = perRow;
  }

  /**
   * How {@code model}'s outputs are classified: per row when the output has a batch dimension, with
   * the labels its configuration gives ({@code label_filename} of {@code config.pbtxt}, else the
   * {@code labels} of {@code config.json}).
   */
  public static Classification of(InferenceModel model) {
    Map<String, List<String>> declared = new HashMap<>();
    for (TensorConfig c : model.config().declared().outputs()) {
      declared.put(c.name(), c.labels());
    }
    Map<String, List<String>> labels = new HashMap<>();
    Set<String> perRow = new HashSet<>();
    for (TensorSpec s : model.metadata().outputs()) {
      List<String> l = declared.getOrDefault(s.name(), List.of());
      labels.put(s.name(), l.isEmpty() ? model.config().labels() : l);
      if (s.shape().size() >= 2 && s.shape().get(0) < 0) {
        perRow.add(s.name());
      }
    }
    return new Classification(Map.copyOf(labels), Set.copyOf(perRow));
  }

  /**
   * {@code outputs} with each output named in {@code classes} replaced by its top classes.
   *
   * @throws InvalidInputException when a classified output does not hold numbers
   */
  public Map<String, Tensor> apply(Map<String, Tensor> outputs, Map<String, Integer> classes) {
    if (classes.isEmpty()) {
      return outputs;
    }
    Map<String, Tensor> out = new LinkedHashMap<>(outputs);
    for (Map.Entry<String, Integer> e : classes.entrySet()) {
      Tensor t = outputs.get(e.getKey());
      if (t != null) {
        out.put(
            t.name(),
            top(
                t,
                e.getValue(),
                perRow.contains(t.name()),
                labels.getOrDefault(t.name(), List.of())));
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
    return Tensor.ofStrings(t.name(), shape, strings);
  }

  private static double value(Tensor t, int i) {
    return ((Number) t.get(i)).doubleValue();
  }
}
