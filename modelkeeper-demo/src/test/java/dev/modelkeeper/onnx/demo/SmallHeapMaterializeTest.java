package dev.modelkeeper.onnx.demo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.modelkeeper.onnx.ModelRepository;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The demo repository, convnet's 64 MiB of weights included, is written by a JVM whose heap is
 * capped well below what encoding the convnet in memory needs (the server died with
 * OutOfMemoryError at -Xmx256m when the writer built each model in a byte array).
 */
class SmallHeapMaterializeTest {

  private static final String MAX_HEAP = "-Xmx96m";
  private static final long TIMEOUT_SECONDS = 120;

  /** The size of {@code convnet/1/model.onnx}. */
  private static final long CONVNET_BYTES = 67_494_826L;

  @TempDir Path tmp;

  @Test
  void materialize_inA96MbHeap_writesTheWholeRepository() throws Exception {
    Path repository = tmp.resolve("demo");
    Path log = tmp.resolve("child.log");
    String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    String classPath =
        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    Process child =
        new ProcessBuilder(
                List.of(
                    javaBin,
                    MAX_HEAP,
                    "-cp",
                    classPath,
                    MaterializeMain.class.getName(),
                    repository.toString()))
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    boolean exited = child.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS);
    if (!exited) {
      child.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
    String output = Files.readString(log, StandardCharsets.UTF_8);
    assertThat(exited)
        .as("child exited within %d s; output:%n%s", TIMEOUT_SECONDS, output)
        .isTrue();
    assertThat(child.exitValue()).as("child exit code; output:%n%s", output).isZero();
    Path convnet = repository.resolve("convnet/1").resolve(ModelRepository.MODEL_FILE);
    assertThat(convnet).exists();
    assertThat(Files.size(convnet)).isEqualTo(CONVNET_BYTES);
    for (String name : DemoRepository.MODEL_NAMES) {
      assertThat(repository.resolve(name).resolve("1").resolve(ModelRepository.MODEL_FILE))
          .exists();
    }
  }

  /** The child process: materializes the demo repository into the folder given. */
  static final class MaterializeMain {
    private MaterializeMain() {}

    public static void main(String[] args) {
      DemoRepository.materialize(Path.of(args[0]));
    }
  }
}
