package dev.modelkeeper.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.modelkeeper.core.BaseModelManager;
import dev.modelkeeper.core.testkit.LogCapture;
import dev.modelkeeper.onnx.LocalModelRepository;
import dev.modelkeeper.onnx.TritonConfig;
import dev.modelkeeper.server.support.TestServer;
import dev.modelkeeper.testkit.DemoRepo;
import dev.modelkeeper.testkit.Http;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A configuration the user got wrong is the user's problem, not the server's: for each kind of
 * mistake (in {@code config.pbtxt} or {@code config.json}) a request answers a status and a reason
 * that names the file and the mistake, never a Java class; the log has one WARN line per model and
 * failure streak and no stack trace; the other models serve.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class BrokenConfigsTest {

  private static final String IRIS_INPUT =
      "input [ { name: \"input\" data_type: TYPE_FP32 dims: [ 4 ] } ]\n";

  private static String body(int rows) {
    StringBuilder data = new StringBuilder();
    for (int i = 0; i < rows * 4; i++) {
      data.append(i == 0 ? "" : ",").append("1.5");
    }
    return "{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":["
        + rows
        + ",4],\"data\":["
        + data
        + "]}]}";
  }

  @TempDir Path root;

  /** An iris copy in {@code name} whose model folder holds {@code file} with {@code text}. */
  private Path iris(String name, String file, String text) throws Exception {
    Path version = Files.createDirectories(root.resolve(name).resolve("1"));
    Files.copy(DemoRepo.root().resolve("iris/1/model.onnx"), version.resolve("model.onnx"));
    Path config =
        file.equals(TritonConfig.FILE_NAME)
            ? root.resolve(name).resolve(file)
            : version.resolve(file);
    Files.writeString(config, text, StandardCharsets.UTF_8);
    return config;
  }

  @Test
  void eachMistake_answersTheFileAndTheReason_logsOneWarnLine_andTheRestServes() throws Exception {
    // model -> (its config file, the status and the words the answer must carry)
    Map<String, Path> files = new LinkedHashMap<>();
    Map<String, String> reasons = new LinkedHashMap<>();
    files.put("pbtxt_syntax", iris("pbtxt_syntax", "config.pbtxt", "max_batch_size: 8\ninput [\n"));
    reasons.put("pbtxt_syntax", "line 3, column 1");
    files.put(
        "pbtxt_unknown_type",
        iris(
            "pbtxt_unknown_type",
            "config.pbtxt",
            "max_batch_size: 8\ninput [ { name: \"input\" data_type: TYPE_FLOAT32 dims: [ 4 ] } ]\n"));
    reasons.put(
        "pbtxt_unknown_type",
        "line 2, column 36: Enum type \"inference.DataType\" has no value named \"TYPE_FLOAT32\"");
    files.put(
        "pbtxt_unsupported_type",
        iris(
            "pbtxt_unsupported_type",
            "config.pbtxt",
            "max_batch_size: 8\ninput [ { name: \"input\" data_type: TYPE_FP16 dims: [ 4 ] } ]\n"));
    reasons.put(
        "pbtxt_unsupported_type",
        "the configuration contradicts the model file: pbtxt_unsupported_type/config.pbtxt"
            + " declares input 'input' as FP16, the model file has FP32");
    files.put(
        "pbtxt_wrong_dims",
        iris(
            "pbtxt_wrong_dims",
            "config.pbtxt",
            "max_batch_size: 8\ninput [ { name: \"input\" data_type: TYPE_FP32 dims: [ 5 ] } ]\n"));
    reasons.put("pbtxt_wrong_dims", "declares input 'input' with dims [5]");
    files.put(
        "pbtxt_twice",
        iris("pbtxt_twice", "config.pbtxt", "max_batch_size: 8\nmax_batch_size: 4\n"));
    reasons.put("pbtxt_twice", "line 2, column 15: \"max_batch_size\" is given more than once");
    files.put("json_syntax", iris("json_syntax", "config.json", "{\"max_batch_size\": 8,,}"));
    reasons.put("json_syntax", "not valid JSON at line 1, column 22");
    Path small = iris("small_batch", "config.pbtxt", "max_batch_size: 2\n" + IRIS_INPUT);

    try (LogCapture manager = LogCapture.of(BaseModelManager.class);
        LogCapture repository = LogCapture.of(LocalModelRepository.class);
        ModelKeeperServer server =
            TestServer.start(
                TestServer.config(new LocalModelRepository(root))
                    .timeouts(t -> t.withLoadFailureBackoff(Duration.ofMillis(50))))) {
      Http http = Http.to(server.port());
      for (var e : files.entrySet()) {
        Http.Response first = http.post("/v2/models/" + e.getKey() + "/infer", body(1));
        // refused the same way every time, without a retry hint: the files must change first
        assertThat(first.status()).as(first.toString()).isEqualTo(400);
        assertThat(first.retryAfter()).isNull();
        assertThat(first.error())
            .as(e.getKey())
            .contains(root.relativize(e.getValue()).toString())
            .doesNotContain(root.toString())
            .contains(reasons.get(e.getKey()))
            .doesNotContain("Exception")
            .doesNotContain("dev.modelkeeper");
        for (int i = 0; i < 4; i++) {
          Http.Response again = http.post("/v2/models/" + e.getKey() + "/infer", body(1));
          assertThat(again.status()).isEqualTo(400);
          assertThat(again.body()).isEqualTo(first.body());
        }
      }
      Http.Response tooMany = http.post("/v2/models/small_batch/infer", body(3));
      assertThat(tooMany.status()).as(tooMany.toString()).isEqualTo(400);
      assertThat(tooMany.error())
          .contains(root.relativize(small).toString())
          .contains("max_batch_size 2");
      assertThat(http.post("/v2/models/small_batch/infer", body(2)).status()).isEqualTo(200);

      for (String model : files.keySet()) {
        // one WARN per mistake: where the configuration was read, or where the load failed
        assertThat(Stream.concat(manager.entries().stream(), repository.entries().stream()))
            .as(model)
            .filteredOn(e -> e.level().intValue() >= Level.WARNING.intValue())
            .filteredOn(e -> e.message().contains("'" + model))
            .singleElement()
            .satisfies(e -> assertThat(e.thrown()).isNull());
      }
    }
  }
}
