package dev.modelkeeper.onnx.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.modelkeeper.onnx.LocalModelRepository;
import dev.modelkeeper.onnx.ModelConfig;
import dev.modelkeeper.onnx.ModelRepository;
import dev.modelkeeper.onnx.OnnxModel;
import dev.modelkeeper.onnx.OnnxModelOptions;
import dev.modelkeeper.onnx.RepositoryEntry;
import dev.modelkeeper.onnx.Tensor;
import dev.modelkeeper.onnx.remote.Manifest;
import dev.modelkeeper.onnx.writer.OnnxGraphBuilder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DemoRepositoryTest {

  @TempDir Path tmp;

  @Test
  void materialize_concurrentCallsOnOneFolder_produceOneCompleteRepository() throws Exception {
    Path dir = tmp.resolve("demo");
    int threads = 3;
    CyclicBarrier start = new CyclicBarrier(threads);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<Path>> results = new ArrayList<>();
      for (int i = 0; i < threads; i++) {
        results.add(
            pool.submit(
                () -> {
                  start.await(10, TimeUnit.SECONDS);
                  return DemoRepository.materialize(dir);
                }));
      }
      for (Future<Path> f : results) {
        assertThat(f.get(60, TimeUnit.SECONDS)).isEqualTo(dir);
      }
    } finally {
      pool.shutdownNow();
      assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }
    List<RepositoryEntry> entries = new LocalModelRepository(dir).list();
    assertThat(entries).extracting(RepositoryEntry::name).containsAll(DemoRepository.MODEL_NAMES);
    assertThat(entries).hasSizeGreaterThanOrEqualTo(4);
    assertThat(Manifest.parse(Files.readString(dir.resolve(Manifest.FILE_NAME))).entries())
        .extracting(Manifest.Entry::path)
        .contains("iris/1/model.onnx", "types/1/config.json");
  }

  @Test
  void materialize_twice_isDeterministicAndReusesFiles() throws Exception {
    Path a = DemoRepository.materialize(tmp.resolve("a"));
    Path b = DemoRepository.materialize(tmp.resolve("b"));
    long modified = Files.getLastModifiedTime(a.resolve("iris/1/model.onnx")).toMillis();
    DemoRepository.materialize(a);
    assertThat(Files.getLastModifiedTime(a.resolve("iris/1/model.onnx")).toMillis())
        .isEqualTo(modified);
    assertThat(Files.readString(a.resolve(Manifest.FILE_NAME)))
        .isEqualTo(Files.readString(b.resolve(Manifest.FILE_NAME)));
  }

  @Test
  void materialize_overAnOlderFormat_rewritesEveryModel() throws Exception {
    Path fresh = DemoRepository.materialize(tmp.resolve("fresh"));
    Path old = DemoRepository.materialize(tmp.resolve("old"));
    // what an older version left: its marker, and a convnet of other weights
    Files.writeString(old.resolve(".modelkeeper-demo"), "demo repository format 1\n");
    Files.write(old.resolve("convnet/1/model.onnx"), new byte[] {1, 2, 3});
    Files.writeString(old.resolve("convnet/1/config.json"), "{}");

    DemoRepository.materialize(old);

    for (String file : List.of("convnet/1/model.onnx", "convnet/1/config.json")) {
      assertThat(Files.mismatch(old.resolve(file), fresh.resolve(file)))
          .as("first differing byte of %s", file)
          .isEqualTo(-1L);
    }
    assertThat(Files.readString(old.resolve(".modelkeeper-demo")))
        .isEqualTo(Files.readString(fresh.resolve(".modelkeeper-demo")));
  }

  @Test
  void materialize_writesTheModelBytesOfTheInMemoryEncoder() throws Exception {
    Path dir = DemoRepository.materialize(tmp.resolve("demo"));
    // each model's SHA-256 as written before the writer streamed (it built them in byte arrays)
    Map<String, String> inMemory =
        Map.of(
            "convnet/1", "4bd35b497033eebdaaf32ccebf90aa70584229829680c5c5e6eac8a16ebacd4e",
            "iris/1", "2806943f9f47e6a1b9420562bbbda6bc8d9d4725cd68483f77b2b1d1cb4a0dec",
            "mlp-medium/1", "00e18089e74d3bf83e3a4f3587ede44f64863d5cc829d93044ead98fa41331c4",
            "mlp-small/1", "8691048562a9082feda297750c89d25369803bbf52656c6dc21b957c00bbbdfd",
            "mlp-small/2", "d9efa6070c090b6b9b3dce8f1d64244f8860e544721b66c2d4fff2d91562b0ee",
            "types/1", "d4aeb9546ed01640fd90023b4a95843d75b93485a0c64bb86d112d8fe7110f4f");
    for (Map.Entry<String, String> e : inMemory.entrySet()) {
      assertThat(Manifest.sha256(dir.resolve(e.getKey()).resolve(ModelRepository.MODEL_FILE)))
          .as("%s", e.getKey())
          .isEqualTo(e.getValue());
    }
  }

  @Test
  void convnetGraph_writtenTwice_givesTheSameBytes() throws Exception {
    OnnxGraphBuilder graph = ConvNet.graph("convnet", DemoRepository.CONVNET_SEED);
    Path first = graph.writeTo(tmp.resolve("first.onnx"));
    Path second = graph.writeTo(tmp.resolve("second.onnx"));
    assertThat(Files.mismatch(first, second)).isEqualTo(-1L);
  }

  @Test
  void materialize_afterAnInterruptedRun_repairsTheFolder() throws Exception {
    Path fresh = DemoRepository.materialize(tmp.resolve("fresh"));
    Path dir = DemoRepository.materialize(tmp.resolve("crashed"));
    // what a run killed while streaming the convnet left: no marker, no manifest, the convnet's
    // config but not its model, the temporary file it was writing; and a model of other bytes
    Files.delete(dir.resolve(".modelkeeper-demo"));
    Files.delete(dir.resolve(Manifest.FILE_NAME));
    Files.delete(dir.resolve("convnet/1").resolve(ModelRepository.MODEL_FILE));
    Path abandoned = dir.resolve("convnet/1/.model-123.tmp");
    Files.write(abandoned, new byte[1000]);
    Files.write(dir.resolve("mlp-small/2").resolve(ModelRepository.MODEL_FILE), new byte[] {1});
    Path iris = dir.resolve("iris/1").resolve(ModelRepository.MODEL_FILE);
    long irisModified = Files.getLastModifiedTime(iris).toMillis();

    DemoRepository.materialize(dir);

    assertThat(abandoned).doesNotExist();
    for (String file :
        List.of(
            "convnet/1/model.onnx",
            "convnet/1/config.json",
            "mlp-small/2/model.onnx",
            Manifest.FILE_NAME,
            ".modelkeeper-demo")) {
      assertThat(Files.mismatch(dir.resolve(file), fresh.resolve(file)))
          .as("first differing byte of %s", file)
          .isEqualTo(-1L);
    }
    assertThat(Files.getLastModifiedTime(iris).toMillis()).as("iris kept").isEqualTo(irisModified);
  }

  @Test
  void materialize_totalSize_staysSmall() throws Exception {
    Path dir = DemoRepository.materialize(tmp.resolve("demo"));
    long total =
        new LocalModelRepository(dir).list().stream().mapToLong(RepositoryEntry::sizeBytes).sum();
    // the convnet's dense head is 64 MiB; every other model together stays under 1 MiB
    assertThat(total).isLessThan(66 << 20);
  }

  @Test
  void ofApproxBytes_1MbAnd64Mb_writeFilesOfThatSize() throws Exception {
    for (long mb : new long[] {1, 64}) {
      long bytes = mb << 20;
      Path f = Mlp.ofApproxBytes(bytes, mb).writeTo(tmp.resolve("mlp" + mb + ".onnx"));
      assertThat((double) Files.size(f)).isCloseTo(bytes, within(bytes * 0.02));
    }
  }

  @Test
  void ofApproxBytes_8Mb_matchesPlainJavaMatrixProduct() throws Exception {
    Mlp mlp = Mlp.ofApproxBytes(8L << 20, 5);
    Path f = mlp.writeTo(tmp.resolve("m.onnx"));
    OnnxModel model = OnnxModel.load(f, "m", "1", ModelConfig.EMPTY, OnnxModelOptions.defaults());
    try {
      float[] x = new float[2 * 256];
      SplittableRandom r = new SplittableRandom(3);
      for (int i = 0; i < x.length; i++) {
        x[i] = (float) r.nextDouble(-1, 1);
      }
      float[] got =
          model
              .infer(
                  Map.of(Mlp.INPUT, Tensor.ofFloats(Mlp.INPUT, new long[] {2, 256}, x)), Set.of())
              .get(Mlp.OUTPUT)
              .floats();
      int hidden = mlp.sizes()[1];
      float[] w0 = mlp.weights(0);
      float[] b0 = mlp.bias(0);
      float[] w1 = mlp.weights(1);
      float[] b1 = mlp.bias(1);
      for (int row = 0; row < 2; row++) {
        double[] h = new double[hidden];
        for (int j = 0; j < hidden; j++) {
          double s = b0[j];
          for (int k = 0; k < 256; k++) {
            s += x[row * 256 + k] * w0[k * hidden + j];
          }
          h[j] = Math.max(0, s);
        }
        for (int o = 0; o < 16; o++) {
          double s = b1[o];
          for (int j = 0; j < hidden; j++) {
            s += h[j] * w1[j * 16 + o];
          }
          assertThat((double) got[row * 16 + o]).isCloseTo(s, within(1e-5));
        }
      }
    } finally {
      model.clearCache();
    }
  }

  @Test
  void irisTraining_isDeterministicAndAccurate() {
    SoftmaxRegression a = IrisClassifier.train();
    SoftmaxRegression b = IrisClassifier.train();
    assertThat(a.weights()).containsExactly(b.weights());
    IrisDataset data = IrisDataset.get();
    assertThat(data.size()).isEqualTo(150);
    int correct = 0;
    for (int i = 0; i < data.size(); i++) {
      correct += a.predict(data.features(i)) == data.label(i) ? 1 : 0;
    }
    assertThat(correct).isGreaterThanOrEqualTo(143);
  }
}
