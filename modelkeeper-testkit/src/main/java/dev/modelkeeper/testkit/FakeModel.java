package dev.modelkeeper.testkit;

import dev.modelkeeper.core.ModelNotLoadedException;
import dev.modelkeeper.core.WithFixedSizeCache;
import dev.modelkeeper.core.testkit.Gate;
import dev.modelkeeper.onnx.Datatype;
import dev.modelkeeper.onnx.InferenceModel;
import dev.modelkeeper.onnx.InvalidInputException;
import dev.modelkeeper.onnx.ModelMetadata;
import dev.modelkeeper.onnx.Tensor;
import dev.modelkeeper.onnx.TensorSpec;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * A fake inference model: input {@code x} FP32 {@code [-1]} to {@code y = 2x} FP32 and {@code n}
 * INT64 {@code [1]} (the element count). Records a violation when it is cleared while running or
 * runs after it was cleared. Thread-safe.
 */
public final class FakeModel implements InferenceModel {

  private final ModelMetadata metadata;
  private final long size;
  private final Supplier<Gate> inferGate;
  private final Supplier<RuntimeException> inferFailure;
  private final Supplier<WithFixedSizeCache.Reservation> working;
  private final AtomicInteger running = new AtomicInteger();
  private final AtomicInteger clears = new AtomicInteger();
  private final List<String> violations = new CopyOnWriteArrayList<>();
  private final List<String> inferThreads = new CopyOnWriteArrayList<>();
  private volatile boolean cleared;

  FakeModel(
      String name,
      String version,
      long size,
      Supplier<Gate> inferGate,
      Supplier<RuntimeException> inferFailure,
      Supplier<WithFixedSizeCache.Reservation> working) {
    this.metadata =
        new ModelMetadata(
            name,
            version,
            "fake",
            List.of(TensorSpec.of("x", Datatype.FP32, -1)),
            List.of(TensorSpec.of("y", Datatype.FP32, -1), TensorSpec.of("n", Datatype.INT64, 1)),
            "fake model " + name + "/" + version,
            List.of());
    this.size = size;
    this.inferGate = inferGate;
    this.inferFailure = inferFailure;
    this.working = working;
  }

  /** The names of the threads that ran this model's inferences, in order. */
  public List<String> inferThreads() {
    return List.copyOf(inferThreads);
  }

  @Override
  public ModelMetadata metadata() {
    return metadata;
  }

  @Override
  public long sizeBytes() {
    return size;
  }

  @Override
  public Map<String, Tensor> infer(Map<String, Tensor> inputs, Set<String> requestedOutputs) {
    inferThreads.add(Thread.currentThread().getName());
    running.incrementAndGet();
    try {
      if (cleared) {
        violations.add(metadata.id() + " ran after clearCache()");
        throw new ModelNotLoadedException(metadata.id() + " was cleared");
      }
      Gate g = inferGate.get();
      if (g != null) {
        g.pass();
      }
      RuntimeException f = inferFailure.get();
      if (f != null) {
        throw f;
      }
      try (WithFixedSizeCache.Reservation reserved = working.get()) {
        return compute(inputs, requestedOutputs);
      }
    } finally {
      running.decrementAndGet();
    }
  }

  private static Map<String, Tensor> compute(
      Map<String, Tensor> inputs, Set<String> requestedOutputs) {
    Tensor x = inputs.get("x");
    if (x == null || inputs.size() != 1) {
      throw new InvalidInputException("fake model needs exactly input 'x', got " + inputs.keySet());
    }
    if (x.datatype() != Datatype.FP32) {
      throw new InvalidInputException("input 'x' must be FP32");
    }
    float[] in = x.floats();
    float[] out = new float[in.length];
    for (int i = 0; i < in.length; i++) {
      out[i] = 2 * in[i];
    }
    Map<String, Tensor> all = new LinkedHashMap<>();
    all.put("y", Tensor.ofFloats("y", new long[] {out.length}, out));
    all.put("n", Tensor.ofLongs("n", new long[] {1}, in.length));
    if (requestedOutputs == null || requestedOutputs.isEmpty()) {
      return all;
    }
    Map<String, Tensor> picked = new LinkedHashMap<>();
    for (String name : requestedOutputs) {
      if (!all.containsKey(name)) {
        throw new InvalidInputException("no output '" + name + "'");
      }
    }
    all.forEach(
        (k, v) -> {
          if (requestedOutputs.contains(k)) {
            picked.put(k, v);
          }
        });
    return picked;
  }

  @Override
  public void clearCache() {
    if (running.get() != 0) {
      violations.add(metadata.id() + " cleared while " + running.get() + " inference(s) ran");
    }
    cleared = true;
    clears.incrementAndGet();
  }

  public int clears() {
    return clears.get();
  }

  public boolean isCleared() {
    return cleared;
  }

  public List<String> violations() {
    return List.copyOf(violations);
  }
}
