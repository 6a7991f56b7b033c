package dev.modelkeeper.onnx;

import static org.assertj.core.api.Assertions.assertThat;

import ai.onnxruntime.OrtEnvironment;
import com.sun.jna.Function;
import com.sun.jna.Pointer;
import dev.modelkeeper.onnx.writer.OnnxGraphBuilder;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.LogManager;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * ONNX Runtime's native messages reach the process's log ({@code System.Logger} "onnxruntime"), not
 * raw stderr. Each case loads, in a JVM of its own (ONNX Runtime's environment is created once per
 * process), a model with an initializer no node uses, about which ONNX Runtime warns while it loads
 * it; the child's java.util.logging (System.Logger's default backend) prints each log event as one
 * {@code logger|level|message} line on stdout, so that stderr holds only what bypassed the log.
 */
class OnnxRuntimeLogTest {

  private static final long TIMEOUT_SECONDS = 60;
  private static final String WARNING =
      "Removing initializer 'spare'. It is not used by any node and should be removed from the"
          + " model.";

  @TempDir Path tmp;

  @Test
  void load_ofAModelOnnxRuntimeWarnsAbout_logsOneWarningNamingTheModel_andNothingOnStderr()
      throws Exception {
    Child child = run("first");

    assertThat(child.stdout())
        .as("log events; stderr:%n%s", child.stderr())
        .containsOnlyOnce("onnxruntime|WARNING|spare/1: " + WARNING)
        .doesNotContain("OnnxRuntimeLog|");
    assertThat(child.stderr()).doesNotContain("Removing initializer").doesNotContain("\u001b[");
  }

  @Test
  void load_afterTheEnvironmentWasCreatedElsewhere_saysOnceWhy_andOnnxRuntimeWritesToStderr()
      throws Exception {
    Child child = run("late");

    assertThat(child.stdout())
        .as("log events; stderr:%n%s", child.stderr())
        .containsOnlyOnce(
            "dev.modelkeeper.onnx.OnnxRuntimeLog|INFO|ONNX Runtime writes its own messages to"
                + " stderr unformatted, not to this log: the ONNX Runtime environment was created"
                + " before its log could be routed")
        .doesNotContain("onnxruntime|");
    assertThat(child.stderr()).contains("[W:onnxruntime:spare/1, ").contains(WARNING);
  }

  @Test
  void errorMessage_ofAStatusOnnxRuntimeMade_isItsMessage() throws Exception {
    // pins GetErrorMessage's place in OrtApi against the ONNX Runtime in use; CreateStatus is first
    Pointer api = OnnxRuntimeLog.ortApi();
    Pointer status =
        (Pointer)
            Function.getFunction(api.getPointer(0))
                .invoke(Pointer.class, new Object[] {1, "no such thing"}); // ORT_FAIL

    assertThat(OnnxRuntimeLog.errorMessage(api, status)).isEqualTo("no such thing");
  }

  /** What a child JVM printed. */
  private record Child(String stdout, String stderr) {}

  /** Runs {@link LoadMain} in a JVM of its own with {@code mode}; it must exit with 0. */
  private Child run(String mode) throws Exception {
    Path model =
        new OnnxGraphBuilder("spare")
            .input("x", Datatype.FP32, -1)
            .initializer("spare", new long[] {2}, new float[] {1f, 2f})
            .node("Identity", List.of("x"), List.of("y"))
            .output("y", Datatype.FP32, -1)
            .writeTo(tmp.resolve("spare/1/model.onnx"));
    Path out = tmp.resolve("stdout.txt");
    Path err = tmp.resolve("stderr.txt");
    String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    String classPath =
        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    Process process =
        new ProcessBuilder(
                List.of(
                    javaBin, "-cp", classPath, LoadMain.class.getName(), mode, model.toString()))
            .redirectOutput(out.toFile())
            .redirectError(err.toFile())
            .start();
    boolean exited = process.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS);
    if (!exited) {
      process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
    Child child =
        new Child(
            Files.readString(out, StandardCharsets.UTF_8),
            Files.readString(err, StandardCharsets.UTF_8));
    assertThat(exited).as("exited within %d s: %s", TIMEOUT_SECONDS, child).isTrue();
    assertThat(process.exitValue()).as("exit code: %s", child).isZero();
    return child;
  }

  /**
   * The child: with its log on stdout, loads the model given as ModelKeeper does; {@code late}
   * first creates ONNX Runtime's environment the way ONNX Runtime's Java API does by itself.
   */
  static final class LoadMain {
    private LoadMain() {}

    public static void main(String[] args) throws Exception {
      LogManager.getLogManager().reset();
      Logger.getLogger("").addHandler(new StdoutHandler());
      if (args[0].equals("late")) {
        OrtEnvironment.getEnvironment();
      }
      OnnxModel.load(Path.of(args[1]), "spare", "1", ModelConfig.EMPTY, OnnxModelOptions.defaults())
          .clearCache();
    }
  }

  /** Prints each log event as {@code logger|level|message}. */
  private static final class StdoutHandler extends Handler {
    private final SimpleFormatter formatter = new SimpleFormatter();
    private final PrintStream out = System.out;

    @Override
    public void publish(LogRecord record) {
      out.println(
          record.getLoggerName() + "|" + record.getLevel() + "|" + formatter.formatMessage(record));
    }

    @Override
    public void flush() {
      out.flush();
    }

    @Override
    public void close() {
      flush();
    }
  }
}
