package dev.modelkeeper.onnx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.modelkeeper.core.BaseModelManager;
import dev.modelkeeper.core.ModelLease;
import dev.modelkeeper.core.ModelManager;
import dev.modelkeeper.onnx.demo.DemoRepository;
import dev.modelkeeper.onnx.demo.IrisDataset;
import dev.modelkeeper.onnx.demo.Mlp;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Loads every demo model through the repository registry and the core manager and checks outputs.
 */
class DemoModelsTest {

  @TempDir static Path tmp;

  private static RepositoryModelRegistry registry;
  private static ModelManager manager;

  @BeforeAll
  static void setUp() {
    Path root = DemoRepository.materialize(tmp.resolve("demo"));
    registry = new RepositoryModelRegistry(new LocalModelRepository(root));
    manager = new BaseModelManager(registry);
  }

  @AfterAll
  static void tearDown() {
    manager.clear();
  }

  private static Map<String, Tensor> infer(String id, Tensor... inputs) {
    try (ModelLease lease = manager.acquire(id, null)) {
      InferenceModel model = (InferenceModel) lease.model();
      LinkedHashMap<String, Tensor> map = new LinkedHashMap<>();
      for (Tensor t : inputs) {
        map.put(t.name(), t);
      }
      return model.infer(map, Set.of());
    }
  }

  @Test
  void iris_knownRows_areLabelledWithTheirSpecies() {
    float[] rows = {
      5.1f, 3.5f, 1.4f, 0.2f, // setosa, row 1
      7.0f, 3.2f, 4.7f, 1.4f, // versicolor, row 51
      6.3f, 3.3f, 6.0f, 2.5f, // virginica, row 101
    };
    Map<String, Tensor> out = infer("iris/1", Tensor.ofFloats("input", new long[] {3, 4}, rows));

    assertThat(out.get("label").longs()).containsExactly(0, 1, 2);
    float[] p = out.get("probabilities").floats();
    assertThat(out.get("probabilities").shape()).containsExactly(3, 3);
    for (int r = 0; r < 3; r++) {
      assertThat(p[r * 3] + p[r * 3 + 1] + p[r * 3 + 2]).isCloseTo(1f, within(1e-5f));
      assertThat(p[r * 3 + r]).isGreaterThan(0.5f);
    }
  }

  @Test
  void iris_wholeDataset_labelsAtLeast95PercentCorrectly() {
    IrisDataset data = IrisDataset.get();
    float[] flat = new float[data.size() * 4];
    for (int i = 0; i < data.size(); i++) {
      System.arraycopy(data.features(i), 0, flat, i * 4, 4);
    }
    long[] labels =
        infer("iris", Tensor.ofFloats("input", new long[] {data.size(), 4}, flat))
            .get("label")
            .longs();
    int correct = 0;
    for (int i = 0; i < data.size(); i++) {
      correct += labels[i] == data.label(i) ? 1 : 0;
    }
    assertThat(correct).isGreaterThanOrEqualTo(143);
  }

  @Test
  void mlpMedium_output_equalsPlainJavaForwardPass() {
    Mlp mlp = DemoRepository.MLP_MEDIUM.build();
    int batch = 3;
    int in = mlp.sizes()[0];
    float[] x = new float[batch * in];
    SplittableRandom r = new SplittableRandom(7);
    for (int i = 0; i < x.length; i++) {
      x[i] = (float) r.nextDouble(-2, 2);
    }
    float[] got =
        infer("mlp-medium/1", Tensor.ofFloats("input", new long[] {batch, in}, x))
            .get("output")
            .floats();

    double[] want = forward(mlp, x, batch);
    assertThat(got).hasSize(want.length);
    for (int i = 0; i < want.length; i++) {
      assertThat((double) got[i]).as("element %d", i).isCloseTo(want[i], within(1e-5));
    }
  }

  /** Dense layers with ReLU between them, in double precision, straight from the weights. */
  static double[] forward(Mlp mlp, float[] x, int batch) {
    int[] sizes = mlp.sizes();
    double[] act = new double[x.length];
    for (int i = 0; i < x.length; i++) {
      act[i] = x[i];
    }
    for (int l = 0; l < mlp.layers(); l++) {
      float[] w = mlp.weights(l);
      float[] b = mlp.bias(l);
      int n = sizes[l];
      int m = sizes[l + 1];
      double[] next = new double[batch * m];
      for (int row = 0; row < batch; row++) {
        for (int j = 0; j < m; j++) {
          double s = b[j];
          for (int k = 0; k < n; k++) {
            s += act[row * n + k] * w[k * m + j];
          }
          next[row * m + j] = l < mlp.layers() - 1 ? Math.max(0, s) : s;
        }
      }
      act = next;
    }
    return act;
  }

  @Test
  void latestVersion_ofMlpSmall_isVersionTwo() {
    try (ModelLease lease = manager.acquire("mlp-small", null)) {
      ModelMetadata md = ((InferenceModel) lease.model()).metadata();
      assertThat(md.version()).isEqualTo("2");
      assertThat(md.platform()).isEqualTo("onnx_onnxv1");
      assertThat(md.inputs()).containsExactly(TensorSpec.of("input", Datatype.FP32, -1, 8));
      assertThat(md.outputs()).containsExactly(TensorSpec.of("output", Datatype.FP32, -1, 4));
    }
  }

  @Test
  void list_demoRepository_hasEveryModelWithDescriptions() {
    List<RepositoryEntry> entries = registry.list();
    assertThat(entries)
        .extracting(RepositoryEntry::id)
        .containsExactly(
            "convnet/1", "iris/1", "mlp-medium/1", "mlp-small/1", "mlp-small/2", "types/1");
    assertThat(entries)
        .allSatisfy(
            e -> {
              assertThat(e.description()).isNotBlank();
              assertThat(e.sizeBytes()).isPositive();
            });
  }
}
