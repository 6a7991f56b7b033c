package dev.modelkeeper.onnx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.modelkeeper.core.BaseModelManager;
import dev.modelkeeper.core.ModelLease;
import dev.modelkeeper.onnx.demo.Mlp;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Unloading returns native memory: RSS stays flat over many load/unload cycles of a large model.
 * Freed pages go back to the OS once unloads pause (the native-heap trim runs ~200 ms after the
 * last unload), so each RSS reading is taken after that trim has run.
 */
class MemoryReturnTest {

  private static final int CYCLES = 200;
  private static final long MODEL_BYTES = 32L << 20;
  private static final long ALLOWED_GROWTH = 128L << 20;

  @TempDir Path root;

  @Test
  void loadAndRemove_200CyclesOf32MbModel_rssStaysWithin128Mb() throws IOException {
    Path file =
        Mlp.ofApproxBytes(MODEL_BYTES, 42)
            .writeTo(root.resolve("big").resolve("1").resolve(ModelRepository.MODEL_FILE));
    assertThat(Files.size(file)).isBetween(MODEL_BYTES - (1 << 20), MODEL_BYTES + (1 << 20));
    BaseModelManager manager =
        new BaseModelManager(new RepositoryModelRegistry(new LocalModelRepository(root)));
    Map<String, Tensor> input =
        Map.of(Mlp.INPUT, Tensor.ofFloats(Mlp.INPUT, new long[] {1, 256}, new float[256]));

    long baseline = 0;
    for (int cycle = 0; cycle < CYCLES; cycle++) {
      try (ModelLease lease = manager.acquire("big/1", null)) {
        Tensor out = ((InferenceModel) lease.model()).infer(input, Set.of()).get(Mlp.OUTPUT);
        assertThat(out.shape()).containsExactly(1, 16);
      }
      long trimsBefore = NativeHeap.trimCount();
      manager.remove("big/1");
      if (cycle == 0) {
        awaitTrimAfter(trimsBefore);
        baseline = rssBytes();
      }
    }
    long trimsBefore = NativeHeap.trimCount();
    assertThat(manager.size()).isZero();
    awaitTrimAfter(trimsBefore);
    long end = rssBytes();
    System.out.printf(
        "RSS after the first cycle %d MB, after %d cycles %d MB%n",
        baseline >> 20, CYCLES, end >> 20);
    assertThat(end - baseline).isLessThan(ALLOWED_GROWTH);
  }

  private static void awaitTrimAfter(long trims) {
    await()
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofMillis(20))
        .until(() -> NativeHeap.trimCount() > trims);
  }

  /** VmRSS of this process, from /proc/self/status. */
  static long rssBytes() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
        if (line.startsWith("VmRSS:")) {
          String kb = line.substring("VmRSS:".length()).trim().split("\\s+")[0];
          return Long.parseLong(kb) * 1024;
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    throw new IllegalStateException("no VmRSS in /proc/self/status");
  }
}
