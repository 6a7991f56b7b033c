package dev.modelkeeper.server.execution;

import dev.modelkeeper.onnx.InferenceModel;
import dev.modelkeeper.onnx.Tensor;
import dev.modelkeeper.onnx.TensorSpec;
import java.lang.reflect.Array;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Concatenates the inputs of several requests along their first (batch) dimension and splits a
 * batched run's outputs back, row for row. Works on every datatype, since it only copies ranges of
 * the tensors' flat row-major arrays. Stateless and thread-safe.
 */
public final class Batches {

  private Batches() {}

  /** True when every input and output of {@code model} has a dynamic first dimension. */
  public static boolean batchable(InferenceModel model) {
    return dynamicFirst(model.metadata().inputs()) && dynamicFirst(model.metadata().outputs());
  }

  private static boolean dynamicFirst(List<TensorSpec> specs) {
    for (TensorSpec s : specs) {
      if (s.shape().isEmpty() || s.shape().get(0) >= 0) {
        return false;
      }
    }
    return !specs.isEmpty();
  }

  /**
   * The first dimension all of {@code inputs} share, or -1 when they disagree or one is a scalar.
   */
  static int rows(Map<String, Tensor> inputs) {
    long rows = -1;
    for (Tensor t : inputs.values()) {
      long[] shape = t.shape();
      if (shape.length == 0 || (rows >= 0 && shape[0] != rows)) {
        return -1;
      }
      rows = shape[0];
    }
    return rows > Integer.MAX_VALUE ? -1 : (int) rows;
  }

  /**
   * What requests must share to run in one batch: the model, the input names, datatypes and every
   * dimension but the first, and the requested outputs.
   */
  static String joinKey(String modelId, Map<String, Tensor> inputs, Set<String> outputs) {
    StringBuilder key = new StringBuilder(modelId).append('|');
    for (Tensor t : new TreeMap<>(inputs).values()) {
      long[] shape = t.shape();
      key.append(t.name())
          .append(':')
          .append(t.datatype())
          .append(
              Arrays.toString(Arrays.copyOfRange(shape, Math.min(1, shape.length), shape.length)))
          .append(';');
    }
    return key.append('|').append(outputs == null ? Set.of() : new TreeSet<>(outputs)).toString();
  }

  /**
   * The inputs of {@code parts} (which share a {@link #joinKey}) concatenated along dimension 0.
   */
  static Map<String, Tensor> concat(List<Map<String, Tensor>> parts) {
    Map<String, Tensor> out = new LinkedHashMap<>();
    for (String name : parts.get(0).keySet()) {
      Tensor first = parts.get(0).get(name);
      long rows = 0;
      int elements = 0;
      for (Map<String, Tensor> p : parts) {
        rows += p.get(name).shape()[0];
        elements += p.get(name).elementCount();
      }
      Object data = Array.newInstance(first.data().getClass().getComponentType(), elements);
      int at = 0;
      for (Map<String, Tensor> p : parts) {
        Tensor t = p.get(name);
        System.arraycopy(t.data(), 0, data, at, t.elementCount());
        at += t.elementCount();
      }
      long[] shape = first.shape();
      shape[0] = rows;
      out.put(name, Tensor.of(name, first.datatype(), shape, data));
    }
    return out;
  }

  /**
   * Splits {@code merged} outputs into one map per request of {@code rows[i]} rows each, or returns
   * null when an output's first dimension is not the batch's row count (the model did not keep rows
   * apart, so its batched answer cannot be split).
   */
  static List<Map<String, Tensor>> split(Map<String, Tensor> merged, int[] rows) {
    long total = 0;
    for (int r : rows) {
      total += r;
    }
    List<Map<String, Tensor>> out = new ArrayList<>(rows.length);
    for (int i = 0; i < rows.length; i++) {
      out.add(new LinkedHashMap<>());
    }
    for (Tensor t : merged.values()) {
      long[] shape = t.shape();
      if (shape.length == 0 || shape[0] != total || total == 0) {
        return null;
      }
      int perRow = (int) (t.elementCount() / total);
      Class<?> component = t.data().getClass().getComponentType();
      int at = 0;
      for (int i = 0; i < rows.length; i++) {
        int n = rows[i] * perRow;
        Object data = Array.newInstance(component, n);
        System.arraycopy(t.data(), at, data, 0, n);
        at += n;
        long[] s = shape.clone();
        s[0] = rows[i];
        out.get(i).put(t.name(), Tensor.of(t.name(), t.datatype(), s, data));
      }
    }
    return out;
  }
}
