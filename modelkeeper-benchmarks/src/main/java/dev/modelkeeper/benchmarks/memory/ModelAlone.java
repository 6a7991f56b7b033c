package dev.modelkeeper.benchmarks.memory;

import dev.modelkeeper.onnx.Datatype;
import dev.modelkeeper.onnx.LocalModelRepository;
import dev.modelkeeper.onnx.ModelMetadata;
import dev.modelkeeper.onnx.NativeHeap;
import dev.modelkeeper.onnx.OnnxModel;
import dev.modelkeeper.onnx.OnnxModelOptions;
import dev.modelkeeper.onnx.OnnxRuntimeState;
import dev.modelkeeper.onnx.RepositoryModelRegistry;
import dev.modelkeeper.onnx.Tensor;
import dev.modelkeeper.onnx.TensorSpec;
import dev.modelkeeper.onnx.demo.DemoRepository;
import dev.modelkeeper.onnx.memory.ProcessMemory;
import java.lang.reflect.Array;
import java.nio.file.Path;
import java.util.ArrayList;
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
 * <p>A small model's whole cost is a few dozen pages, less than the RSS of a JVM moves on its own;
 * with {@code copies} above 1 the program loads that many sessions of the model one after another,
 * runs each once, then closes them all, and prints the figures of one copy: the load peak, idle and
 * after-close figures are {@code before} plus the total's growth divided by {@code copies}, the run
 * peak is the idle figure plus the median of what each run (one at a time) added to RSS, where one
 * copy's is the idle figure plus the most a run added.
 *
 * <p>Usage: {@code ModelAlone <repository> <name/version> <rows> <runs> [copies]}, or {@code
 * ModelAlone --demo DIR} to write the demo repository there when it is missing. Not thread-safe; a
 * program.
 */
public final class ModelAlone {

  private static final long SAMPLE_NANOS = 200_000;
  private static final int SMALL_MODEL_WARM_UP_RUNS = 3_000;

  private ModelAlone() {}

  public static void main(String[] args) throws Exception {
    if (args.length == 2 && args[0].equals("--demo")) {
      DemoRepository.materialize(Path.of(args[1])); // for scripts/bench-memory.sh
      return;
    }
    Path repository = Path.of(args[0]);
    String id = args[1];
    int rows = Integer.parseInt(args[2]);
    int runs = Integer.parseInt(args[3]);
    int copies = args.length > 4 ? Integer.parseInt(args[4]) : 1;
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
    OnnxRuntimeState.environment();
    RepositoryModelRegistry registry =
        new RepositoryModelRegistry(
            new LocalModelRepository(repository), OnnxModelOptions.defaults());
    // one full cycle first, so that class loading, compiled code and ONNX Runtime's first
    // session are behind us and only the model moves RSS in the measured cycle
    OnnxModel warmUp = (OnnxModel) registry.getModel(id, null).create(id, null);
    Map<String, Tensor> warmInputs = zeros(warmUp.metadata(), rows);
    // small models (copies) run the warm-up long enough for the JIT to compile the run path: a
    // compilation's own memory would read as the measured runs' working memory
    int warmUpRuns = copies > 1 ? Math.max(runs, SMALL_MODEL_WARM_UP_RUNS) : runs;
    for (int i = 0; i < warmUpRuns; i++) {
      warmUp.infer(warmInputs, Set.of());
      if (i % 100 == 0) {
        System.gc();
      }
    }
    warmUp.clearCache();
    // and as many loads as will be measured, for the JIT to have compiled the load path too
    for (int c = 1; c < copies; c++) {
      ((OnnxModel) registry.getModel(id, null).create(id, null)).clearCache();
    }
    NativeHeap.trim();
    System.gc();
    Thread.sleep(500); // let the JVM settle: this program's own pause, not a thread ordering
    long before = ProcessMemory.residentBytes();
    peak.set(before);
    sampler.start();
    List<OnnxModel> models = new ArrayList<>();
    for (int c = 0; c < copies; c++) {
      models.add((OnnxModel) registry.getModel(id, null).create(id, null));
    }
    long loadPeak = before + (peak.get() - before) / copies;
    Thread.sleep(500);
    long allIdle = ProcessMemory.residentBytes();
    long idle = before + (allIdle - before) / copies;
    peak.set(allIdle);
    Map<String, Tensor> inputs = zeros(models.get(0).metadata(), rows);
    // each run's own rise above the RSS just before it, as the server reads a run: the most of
    // them for one copy; the median for copies of a small model, whose run takes less than the
    // rest of the process moves RSS by
    long[] rises = new long[runs * copies];
    int k = 0;
    for (int i = 0; i < runs; i++) {
      for (OnnxModel model : models) {
        long start = ProcessMemory.residentBytes();
        peak.set(start);
        model.infer(inputs, Set.of());
        long end = Math.max(peak.get(), ProcessMemory.residentBytes());
        rises[k++] = Math.max(0, end - start);
      }
      // ONNX Runtime's Java API copies each input into a direct buffer that only a GC frees; a
      // server's request traffic collects them all the time, this loop would pile them up
      System.gc();
    }
    Arrays.sort(rises);
    long runPeak = idle + (copies == 1 ? rises[rises.length - 1] : rises[rises.length / 2]);
    for (OnnxModel model : models) {
      model.clearCache();
    }
    NativeHeap.trim();
    long afterClose = before + (ProcessMemory.residentBytes() - before) / copies;
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
      if (data instanceof byte[][]) {
        Arrays.fill((byte[][]) data, new byte[0]);
      }
      inputs.put(spec.name(), Tensor.of(spec.name(), dt, shape, data));
    }
    return inputs;
  }
}
