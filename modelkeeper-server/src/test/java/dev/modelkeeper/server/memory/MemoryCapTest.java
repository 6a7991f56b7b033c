package dev.modelkeeper.server.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.modelkeeper.onnx.LocalModelRepository;
import dev.modelkeeper.onnx.demo.Mlp;
import dev.modelkeeper.server.ModelKeeperServer;
import dev.modelkeeper.server.config.InvalidConfigException;
import dev.modelkeeper.server.support.TestServer;
import dev.modelkeeper.testkit.DemoRepo;
import dev.modelkeeper.testkit.Http;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The process memory cap: how it splits, what a model that can never fit gets, what is shown. */
class MemoryCapTest {

  @TempDir Path dir;

  /** What the JVM takes of a cap now (the heap's maximum and what lies beside it). */
  private static long jvmBytes() {
    return MemoryGuard.split(new MemoryCap(1L << 50, "test")).jvmBytes();
  }

  @Test
  void aModelThatCanNeverFitTheCap_is507WithTheFigures_atLoad() {
    Mlp.ofApproxBytes(24L << 20, 5).writeTo(dir.resolve("big/1/model.onnx"));
    long cap = jvmBytes() + (48L << 20); // room for 48 MiB; an unmeasured 24 MB model needs 64
    try (ModelKeeperServer server =
        TestServer.start(
            TestServer.config(new LocalModelRepository(dir)).budgets(m -> m.withMaxMemory(cap)))) {
      Http.Response r = Http.to(server.port()).post("/v2/repository/models/big/load", "{}");

      assertThat(r.status()).isEqualTo(507);
      assertThat(r.retryAfter()).isNull();
      assertThat(r.error())
          .contains("cannot load 'big/1'")
          .containsPattern(
              "needs [\\d.]+ MiB \\(\\d+ bytes\\), more than the whole byte budget of [\\d.]+ MiB");
      assertThat(server.manager().keys()).isEmpty();
    }
  }

  @Test
  void aCapBelowWhatTheJvmTakes_isRefusedNamingTheSetting() {
    assertThatThrownBy(
            () ->
                TestServer.start(
                    TestServer.config(DemoRepo.repository())
                        .budgets(m -> m.withMaxMemory(1L << 20))))
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("max-memory")
        .hasMessageContaining("leaves no room for models")
        .hasMessageContaining("-Xmx");
  }

  @Test
  void registryAndMetrics_showTheCap_andWhatEachModelIsChargedAndMeasured() {
    try (ModelKeeperServer server =
        TestServer.start(
            TestServer.config(DemoRepo.repository())
                .budgets(m -> m.withMaxMemory(jvmBytes() + (256L << 20))))) {
      Http http = Http.to(server.port());
      assertThat(
              http.post(
                      "/v2/models/iris/infer",
                      "{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1,4],"
                          + "\"data\":[5.1,3.5,1.4,0.2]}]}")
                  .status())
          .isEqualTo(200);

      JsonNode registry = http.get("/model/registry").json();
      JsonNode iris = registry.get("models").get(0);
      assertThat(iris.get("model_id").asText()).isEqualTo("iris/1");
      assertThat(iris.get("charged_bytes").asLong()).isPositive();
      assertThat(iris.get("measured_bytes").isNull() || iris.get("measured_bytes").asLong() > 0)
          .isTrue();
      JsonNode memory = registry.get("memory");
      assertThat(memory.get("cap_bytes").asLong()).isEqualTo(server.memory().cap().bytes());
      assertThat(memory.get("cap_source").asText()).isEqualTo("--max-memory");
      assertThat(memory.get("resident_bytes").asLong()).isPositive();
      assertThat(memory.get("models_bytes").asLong()).isEqualTo(iris.get("charged_bytes").asLong());
      assertThat(registry.get("max_bytes").asLong()).isEqualTo(server.memory().modelBytes());

      JsonNode index = http.post("/v2/repository/index", "{\"ready\": true}").json();
      assertThat(index.get(0).get("charged_bytes").asLong())
          .isEqualTo(iris.get("charged_bytes").asLong());

      assertThat(http.get("/metrics").body())
          .contains("modelkeeper_memory_cap_bytes " + (double) server.memory().cap().bytes())
          .contains("modelkeeper_process_resident_bytes")
          .contains("modelkeeper_memory_headroom_bytes")
          .contains("modelkeeper_model_charged_bytes{model=\"iris/1\"}");
    }
  }

  @Test
  void theDefaultCap_isAShareOfTheMachineOrContainer_andSaysSo() {
    MemoryCap cap = MemoryCap.choose(0);

    assertThat(cap.bytes()).isPositive();
    assertThat(cap.source()).startsWith("80% of the");
    assertThat(MemoryCap.choose(123L << 20)).isEqualTo(new MemoryCap(123L << 20, "--max-memory"));
  }
}
