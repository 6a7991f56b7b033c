package dev.modelkeeper.benchmarks;

import dev.modelkeeper.onnx.LocalModelRepository;
import dev.modelkeeper.onnx.ModelId;
import dev.modelkeeper.onnx.OnnxModel;
import dev.modelkeeper.onnx.OnnxModelOptions;
import dev.modelkeeper.onnx.Tensor;
import dev.modelkeeper.onnx.TensorSpec;
import dev.modelkeeper.onnx.demo.DemoRepository;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The in-process floor of the protocol and batching benchmarks: one ONNX Runtime run of a demo
 * model on the calling thread, no server, with the session settings the server uses ({@link
 * OnnxModelOptions#defaults()} and the model's own {@code config.json}) and the input the load
 * tools send (pseudo-random FP32 in [0, 1), {@code rows} rows). Average time per run. Thread-safe
 * as JMH uses it: each benchmark thread runs the shared model, which ONNX Runtime allows.
 *
 * <p>The demo repository is read from {@code -Ddemo=DIR} (default {@code
 * ~/.cache/modelkeeper/demo-repository}, written there when missing).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class InferenceFloorBenchmark {

  /** {@code model:rows}: the cells of scripts/bench-protocols.sh and scripts/bench-batching.sh. */
  @Param({"iris:1", "mlp-medium:1", "mlp-medium:64", "convnet:1", "convnet:32"})
  public String cell;

  private OnnxModel model;
  private Map<String, Tensor> inputs;

  @Setup
  public void setUp() {
    Path demo =
        Path.of(
            System.getProperty(
                "demo",
                Path.of(System.getProperty("user.home"), ".cache", "modelkeeper", "demo-repository")
                    .toString()));
    String[] parts = cell.split(":");
    int rows = Integer.parseInt(parts[1]);
    model =
        OnnxModel.load(
            new LocalModelRepository(DemoRepository.materialize(demo))
                .fetch(new ModelId(parts[0], "1")),
            OnnxModelOptions.defaults());
    inputs = new LinkedHashMap<>();
    SplittableRandom random = new SplittableRandom(parts[0].hashCode());
    for (TensorSpec spec : model.metadata().inputs()) {
      List<Long> dims = spec.shape();
      long[] shape = new long[dims.size()];
      int count = 1;
      for (int i = 0; i < shape.length; i++) {
        shape[i] = dims.get(i) >= 0 ? dims.get(i) : (i == 0 ? rows : 1);
        count *= (int) shape[i];
      }
      float[] x = new float[count];
      for (int i = 0; i < count; i++) {
        x[i] = (float) random.nextDouble();
      }
      inputs.put(spec.name(), Tensor.ofFloats(spec.name(), shape, x));
    }
  }

  @Benchmark
  public Map<String, Tensor> run() {
    return model.infer(inputs, Set.of());
  }

  @TearDown
  public void tearDown() throws Exception {
    model.clearCache();
  }
}
