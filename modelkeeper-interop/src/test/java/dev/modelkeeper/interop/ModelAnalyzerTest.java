package dev.modelkeeper.interop;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * NVIDIA's Model Analyzer 1.58.0 in remote mode against the packaged jar on Triton's ports, run by
 * {@code scripts/model-analyzer.sh}: it reads the model's configuration from the server, loads each
 * configuration it tries with a config override (instance count 1 and 2), measures each with
 * perf_analyzer while reading Triton's metrics from {@code http://localhost:8002/metrics} (its
 * default), and reports the measured configurations. The script fails unless two configurations
 * with different instance counts were measured.
 */
@Timeout(value = 12, unit = TimeUnit.MINUTES)
class ModelAnalyzerTest {

  @TempDir Path out;

  @Test
  void modelAnalyzer_remoteMode_measuresTwoConfigurations() throws Exception {
    Path scripts = Path.of(System.getProperty("interop.scripts.dir"));
    Processes.Outcome run =
        Processes.run(
            List.of(
                "bash",
                scripts.resolve("model-analyzer.sh").toString(),
                "--no-build",
                "--out",
                out.toString()),
            Duration.ofMinutes(11));
    assertThat(run.exitCode()).as("the script's output:%n%s", run.output()).isZero();
    assertThat(run.output())
        .contains("iris_config_0")
        .contains("iris_config_1")
        .containsPattern("instance groups \\[.*'1:CPU'.*'2:CPU'.*\\]");
  }
}
