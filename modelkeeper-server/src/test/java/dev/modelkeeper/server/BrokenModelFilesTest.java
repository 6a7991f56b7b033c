package dev.modelkeeper.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.modelkeeper.core.BaseModelManager;
import dev.modelkeeper.core.testkit.LogCapture;
import dev.modelkeeper.onnx.LocalModelRepository;
import dev.modelkeeper.server.engine.Failure;
import dev.modelkeeper.server.support.DemoRepo;
import dev.modelkeeper.server.support.Http;
import dev.modelkeeper.server.support.TestServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A model whose file is broken is the user's problem, not the server's: each failed load answers
 * the file and ONNX Runtime's reason, never a Java class name, and a streak of failures logs one
 * WARN line without a stack trace.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class BrokenModelFilesTest {

  private static final String BODY =
      "{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1,4],"
          + "\"data\":[5.1,3.5,1.4,0.2]}]}";

  @TempDir Path root;

  @Test
  void aCorruptModelFile_answersTheFileAndTheReason_andLogsOneLinePerStreak() throws Exception {
    Path file = Files.createDirectories(root.resolve("broken/1")).resolve("model.onnx");
    byte[] iris = Files.readAllBytes(DemoRepo.root().resolve("iris/1/model.onnx"));
    Files.write(file, Arrays.copyOf(iris, iris.length / 2)); // cut short, as by a failed copy

    try (LogCapture manager = LogCapture.of(BaseModelManager.class);
        LogCapture mapper = LogCapture.of(Failure.class);
        ModelKeeperServer server =
            TestServer.start(
                TestServer.config(new LocalModelRepository(root))
                    .loadFailureBackoff(Duration.ofMillis(50))
                    .build())) {
      Http http = Http.to(server.port());
      List<Http.Response> failedLoads = new CopyOnWriteArrayList<>();
      // two loads that fail in a row (the second once the back-off window has passed), and the
      // answers given within the window between them
      await()
          .atMost(Duration.ofSeconds(20))
          .pollInterval(Duration.ofMillis(20))
          .until(
              () -> {
                Http.Response r = http.post("/v2/models/broken/infer", BODY);
                assertThat(r.body()).doesNotContain("Exception").doesNotContain("dev.modelkeeper");
                if (r.status() == 500) {
                  failedLoads.add(r);
                } else {
                  assertThat(r.status()).as(r.toString()).isEqualTo(503);
                }
                return failedLoads.size() >= 2;
              });

      for (Http.Response r : failedLoads) {
        assertThat(r.error()).contains(file.toString()).contains("Protobuf parsing failed");
      }
      assertThat(manager.entries())
          .filteredOn(e -> e.level().intValue() >= Level.WARNING.intValue())
          .singleElement()
          .satisfies(
              e -> {
                assertThat(e.message()).startsWith("cannot load 'broken/1': ");
                assertThat(e.message()).contains(file.toString());
                assertThat(e.thrown()).isNull();
              });
      assertThat(mapper.entries())
          .filteredOn(e -> e.level().intValue() >= Level.WARNING.intValue())
          .isEmpty();
    }
  }
}
