package dev.modelkeeper.server.execution;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.modelkeeper.onnx.Datatype;
import dev.modelkeeper.onnx.LocalModelRepository;
import dev.modelkeeper.onnx.OnnxModel;
import dev.modelkeeper.onnx.OnnxModelOptions;
import dev.modelkeeper.onnx.RepositoryEntry;
import dev.modelkeeper.onnx.Tensor;
import dev.modelkeeper.onnx.TensorSpec;
import dev.modelkeeper.server.request.ModelTarget;
import dev.modelkeeper.testkit.DemoRepo;
import java.lang.reflect.Array;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Every demo model whose first dimension is variable, on ONNX Runtime, batched by a {@link
 * ModelExecutor}: requests of 1, 2 and 3 rows run as one batch of 6 rows, and each request gets
 * exactly the outputs a run of it alone gives, row for row.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class BatchedDemoModelsTest {

  private static final int[] ROWS = {1, 2, 3};

  @Test
  void batchedRun_everyDemoModelWithABatchDimension_equalsSingleRunsRowByRow() throws Exception {
    LocalModelRepository repo = DemoRepo.repository();
    List<String> batched = new ArrayList<>();
    for (RepositoryEntry entry : repo.list()) {
      OnnxModel model = OnnxModel.load(repo.fetch(entry.modelId()), OnnxModelOptions.defaults());
      try {
        if (Batches.batchable(model)) {
          checkBatchedEqualsSingle(entry.id(), model);
          batched.add(entry.id());
        }
      } finally {
        model.clearCache();
      }
    }
    assertThat(batched)
        .containsExactlyInAnyOrder(
            "convnet/1", "iris/1", "mlp-medium/1", "mlp-small/1", "mlp-small/2", "types/1");
  }

  private static void checkBatchedEqualsSingle(String id, OnnxModel model) throws Exception {
    ArrayDeque<Runnable> runs = new ArrayDeque<>();
    List<Integer> batchRows = new ArrayList<>();
    ExecutionSettings settings = new ExecutionSettings(64, 0, Set.of(), 1, 16);
    ModelExecutor executor =
        new ModelExecutor(
            id,
            settings,
            m -> settings,
            (target, work) -> work.accept(model),
            runs::add,
            (task, delay) -> {
              throw new AssertionError("no delay is configured");
            },
            () -> 0L,
            new ExecutionListener() {
              @Override
              public void rejected() {}

              @Override
              public void waited(long queueNanos) {}

              @Override
              public void ran(int requests, int rows, long runNanos) {
                batchRows.add(rows);
              }
            });
    ModelTarget target = new ModelTarget(id, "1", id, null);
    SplittableRandom random = new SplittableRandom(id.hashCode());
    // the first call runs alone and shows the executor the model; the next three queue behind it
    CompletableFuture<Map<String, Tensor>> first =
        executor.submit(
            target, inputs(model, 1, random), Set.of(), Long.MAX_VALUE, Execution.NO_RUN);
    List<Map<String, Tensor>> requests = new ArrayList<>();
    List<CompletableFuture<Map<String, Tensor>>> answers = new ArrayList<>();
    for (int rows : ROWS) {
      Map<String, Tensor> in = inputs(model, rows, random);
      requests.add(in);
      answers.add(executor.submit(target, in, Set.of(), Long.MAX_VALUE, Execution.NO_RUN));
    }
    Runnable r;
    while ((r = runs.poll()) != null) {
      r.run();
    }
    first.get(1, TimeUnit.SECONDS);
    assertThat(batchRows).as(id).containsExactly(1, 6);
    for (int i = 0; i < ROWS.length; i++) {
      Map<String, Tensor> alone = model.infer(requests.get(i));
      Map<String, Tensor> batched = answers.get(i).get(1, TimeUnit.SECONDS);
      assertThat(batched.keySet()).as(id).containsExactlyElementsOf(alone.keySet());
      for (String name : alone.keySet()) {
        Tensor a = alone.get(name);
        Tensor b = batched.get(name);
        assertThat(b.shape()).as(id + " " + name).containsExactly(a.shape());
        assertThat(b.datatype()).isEqualTo(a.datatype());
        assertThat(b.toList()).as(id + " " + name + " rows of request " + i).isEqualTo(a.toList());
      }
    }
  }

  /** Random inputs of {@code rows} rows for every input of {@code model}. */
  private static Map<String, Tensor> inputs(OnnxModel model, int rows, SplittableRandom random) {
    Map<String, Tensor> out = new LinkedHashMap<>();
    for (TensorSpec spec : model.metadata().inputs()) {
      long[] shape = spec.shapeArray();
      shape[0] = rows;
      int n = 1;
      for (long d : shape) {
        n *= (int) d;
      }
      out.put(
          spec.name(),
          Tensor.of(spec.name(), spec.datatype(), shape, values(spec.datatype(), n, random)));
    }
    return out;
  }

  private static Object values(Datatype type, int n, SplittableRandom random) {
    Object data = Array.newInstance(type.arrayType().getComponentType(), n);
    for (int i = 0; i < n; i++) {
      switch (type) {
        case FP32 -> Array.setFloat(data, i, (float) random.nextDouble(-2, 2));
        case FP64 -> Array.setDouble(data, i, random.nextDouble(-2, 2));
        case INT64 -> Array.setLong(data, i, random.nextInt(-1000, 1000));
        case INT32 -> Array.setInt(data, i, random.nextInt(-1000, 1000));
        case INT16 -> Array.setShort(data, i, (short) random.nextInt(-1000, 1000));
        case INT8, UINT8 -> Array.setByte(data, i, (byte) random.nextInt(256));
        case BOOL -> Array.setBoolean(data, i, random.nextBoolean());
        case BYTES -> Array.set(data, i, ("s" + random.nextInt(1000)).getBytes(UTF_8));
        default -> throw new AssertionError(type);
      }
    }
    return data;
  }
}
