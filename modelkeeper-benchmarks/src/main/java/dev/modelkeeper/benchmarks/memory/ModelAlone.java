package dev.modelkeeper.benchmarks.memory;

import dev.modelkeeper.onnx.Datatype;
import dev.modelkeeper.onnx.LocalModelRepository;
import dev.modelkeeper.onnx.ModelMetadata;
import dev.modelkeeper.onnx.NativeHeap;
import dev.modelkeeper.onnx.OnnxModel;
import dev.modelkeeper.onnx.OnnxModelOptions;
import dev.modelkeeper.onnx.RepositoryModelRegistry;
import dev.modelkeeper.onnx.Tensor;
import dev.modelkeeper.onnx.TensorSpec;
import dev.modelkeeper.onnx.memory.ProcessMemory;
import java.lang.reflect.Array;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The reference figures of the per-model table: one model alone in a process of its own, no server
 * around it. Run it in a JVM whose heap is fixed and touched up front ({@code -Xms -Xmx
 * -XX:+AlwaysPreTouch}), so the heap adds nothing to RSS while it runs; a thread samples RSS every
 * 200 µs. One load, run and close of the model goes first, unmeasured, so that the JVM's first use
 * of the code and ONNX Runtime's first session are not counted. Prints one line: {@code before
 * loadPeak idle runPeak afterClose} in bytes.
 *
 * <p>Usage: {@code ModelAlone <repository> <name/version> <rows> <runs>}. Not thread-safe; a
 * program.
 */
public final class ModelAlone {

  private static final long SAMPLE_NANOS = 200_000;

  private ModelAlone() {}

  public static void main(String[] args) throws Exception {
    Path repository = Path.of(args[0]);
    String id = args[1];
    int rows = Integer.parseInt(args[2]);
    int runs = Integer.parseInt(args[3]);
    AtomicLong peak = new AtomicLong();
    Thread sampler =
        new Thread(
            () -> {
              while (!Thread.currentThread().isInterrupted()) {
                peak.accumulateAndGet(ProcessMemory.residentBytes(), Math::max);
                LockSupport.parkNanos(SAMPLE_NANOS);
              }
            },
            "rss-sampler");
    sampler.setDaemon(true);
    ai.onnxruntime.OrtEnvironment.getEnvironment();
    RepositoryModelRegistry registry =
        new RepositoryModelRegistry(
            new LocalModelRepository(repository), OnnxModelOptions.defaults());
    // one full cycle first, so that class loading, compiled code and ONNX Runtime's first
    // session are behind us and only the model moves RSS in the measured cycle
    OnnxModel warmUp = (OnnxModel) registry.getModel(id, null).create(id, null);
    Map<String, Tensor> warmInputs = zeros(warmUp.metadata(), rows);
    for (int i = 0; i < runs; i++) {
      warmUp.infer(warmInputs, Set.of());
      System.gc();
    }
    warmUp.clearCache();
    NativeHeap.trim();
    System.gc();
    Thread.sleep(500); // let the JVM settle: this program's own pause, not a thread ordering
    long before = ProcessMemory.residentBytes();
    peak.set(before);
    sampler.start();
    OnnxModel model = (OnnxModel) registry.getModel(id, null).create(id, null);
    long loadPeak = peak.get();
    Thread.sleep(500);
    long idle = ProcessMemory.residentBytes();
    peak.set(idle);
    Map<String, Tensor> inputs = zeros(model.metadata(), rows);
    for (int i = 0; i < runs; i++) {
      model.infer(inputs, Set.of());
      // ONNX Runtime's Java API copies each input into a direct buffer that only a GC frees; a
      // server's request traffic collects them all the time, this loop would pile them up
      System.gc();
    }
    long runPeak = peak.get();
    model.clearCache();
    NativeHeap.trim();
    long afterClose = ProcessMemory.residentBytes();
    sampler.interrupt();
    System.out.println(before + " " + loadPeak + " " + idle + " " + runPeak + " " + afterClose);
  }

  /** Zero-valued inputs of {@code rows} rows (where the first dimension is free). */
  private static Map<String, Tensor> zeros(ModelMetadata metadata, int rows) {
    Map<String, Tensor> inputs = new LinkedHashMap<>();
    for (TensorSpec spec : metadata.inputs()) {
      List<Long> dims = spec.shape();
      long[] shape = new long[dims.size()];
      for (int i = 0; i < shape.length; i++) {
        shape[i] = dims.get(i) >= 0 ? dims.get(i) : (i == 0 ? rows : 1);
      }
      int count = (int) Arrays.stream(shape).reduce(1, (a, b) -> a * b);
      Datatype dt = spec.datatype();
      Object data = Array.newInstance(dt.arrayType().getComponentType(), count);
      if (data instanceof String[]) {
        Arrays.fill((String[]) data, "");
      }
      inputs.put(spec.name(), Tensor.of(spec.name(), dt, shape, data));
    }
    return inputs;
  }
}
