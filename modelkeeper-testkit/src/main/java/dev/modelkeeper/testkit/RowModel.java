package dev.modelkeeper.testkit;

import dev.modelkeeper.core.testkit.Gate;
import dev.modelkeeper.onnx.Datatype;
import dev.modelkeeper.onnx.InferenceModel;
import dev.modelkeeper.onnx.InvalidInputException;
import dev.modelkeeper.onnx.ModelConfig;
import dev.modelkeeper.onnx.ModelMetadata;
import dev.modelkeeper.onnx.Tensor;
import dev.modelkeeper.onnx.TensorSpec;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A batchable fake model: input {@code x} FP32 {@code [-1, -1]} to {@code y = x + 1} (same shape)
 * and {@code sum} FP32 {@code [-1]} (each row's sum). Rows are independent, as a batchable model's
 * must be. A NaN anywhere in the input is bad input ({@link InvalidInputException}); a value of 13
 * makes the whole run fail like a broken runtime. Records the row count of every run, and whether
 * it ran after {@link #clearCache()} or was cleared while running. Thread-safe.
 */
public final class RowModel implements InferenceModel {

  private final ModelMetadata metadata;
  private final ModelConfig config;
  private final List<Long> runs = new CopyOnWriteArrayList<>();
  private final List<String> violations = new CopyOnWriteArrayList<>();
  private final AtomicReference<Gate> gate = new AtomicReference<>();
  private final AtomicReference<Runnable> duringRun = new AtomicReference<>(() -> {});
  private final AtomicInteger running = new AtomicInteger();
  private volatile boolean cleared;

  public RowModel(String name, ModelConfig.Execution execution) {
    this.metadata =
        new ModelMetadata(
            name,
            "1",
            "fake",
            List.of(TensorSpec.of("x", Datatype.FP32, -1, -1)),
            List.of(
                TensorSpec.of("y", Datatype.FP32, -1, -1), TensorSpec.of("sum", Datatype.FP32, -1)),
            "rows plus one",
            List.of());
    this.config = new ModelConfig("", List.of(), -1, execution);
  }

  /** Makes every later run wait at {@code g} (null: no wait). */
  public RowModel gate(Gate g) {
    gate.set(g);
    return this;
  }

  /** Runs {@code r} in every later run (a test's clock advancing by a run's duration). */
  public RowModel duringRun(Runnable r) {
    duringRun.set(r);
    return this;
  }

  /** The row count of every run, in order. */
  public List<Long> runs() {
    return List.copyOf(runs);
  }

  public List<String> violations() {
    return List.copyOf(violations);
  }

  @Override
  public ModelMetadata metadata() {
    return metadata;
  }

  @Override
  public ModelConfig config() {
    return config;
  }

  @Override
  public long sizeBytes() {
    return 100;
  }

  @Override
  public Map<String, Tensor> infer(Map<String, Tensor> inputs, Set<String> requestedOutputs) {
    running.incrementAndGet();
    try {
      if (cleared) {
        violations.add(metadata.id() + " ran after clearCache()");
      }
      Tensor x = inputs.get("x");
      if (x == null || x.shape().length != 2) {
        throw new InvalidInputException("x must be a matrix");
      }
      runs.add(x.shape()[0]);
      duringRun.get().run();
      Gate g = gate.get();
      if (g != null) {
        g.pass();
      }
      float[] in = x.floats();
      float[] y = new float[in.length];
      int cols = (int) x.shape()[1];
      float[] sum = new float[(int) x.shape()[0]];
      for (int i = 0; i < in.length; i++) {
        if (Float.isNaN(in[i])) {
          throw new InvalidInputException("x holds NaN");
        }
        if (in[i] == 13f) {
          throw new IllegalStateException("the runtime broke on 13");
        }
        y[i] = in[i] + 1;
        sum[i / cols] += in[i];
      }
      Map<String, Tensor> out = new LinkedHashMap<>();
      if (requestedOutputs == null
          || requestedOutputs.isEmpty()
          || requestedOutputs.contains("y")) {
        out.put("y", Tensor.ofFloats("y", x.shape(), y));
      }
      if (requestedOutputs == null
          || requestedOutputs.isEmpty()
          || requestedOutputs.contains("sum")) {
        out.put("sum", Tensor.ofFloats("sum", new long[] {sum.length}, sum));
      }
      return out;
    } finally {
      running.decrementAndGet();
    }
  }

  @Override
  public void clearCache() {
    if (running.get() != 0) {
      violations.add(metadata.id() + " cleared while " + running.get() + " run(s) were running");
    }
    cleared = true;
  }

  /** A tensor {@code x} of {@code rows} rows of {@code cols} values, starting at {@code first}. */
  public static Map<String, Tensor> rows(int rows, int cols, float first) {
    float[] v = new float[rows * cols];
    for (int i = 0; i < v.length; i++) {
      v[i] = first + i;
    }
    return Map.of("x", Tensor.ofFloats("x", new long[] {rows, cols}, v));
  }
}
