package dev.modelkeeper.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.modelkeeper.server.support.TestServer;
import dev.modelkeeper.testkit.FakeModels;
import dev.modelkeeper.testkit.Http;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code --preload '*'}: every model's highest version, in name order, as many as fit. */
class PreloadAllTest {

  @Test
  void preloadAll_loadsWhatFitsInNameOrder_evictsNone_andLeavesTheRestReady() {
    FakeModels models = FakeModels.of("delta/1", "alpha/1", "alpha/2", "beta/1", "gamma/1");
    ModelKeeperServer server =
        TestServer.fake(
            models,
            c ->
                c.withPreload(List.of(ModelKeeperServer.PRELOAD_ALL))
                    .budgets(b -> b.withMaxModels(2)));
    try {
      await().atMost(Duration.ofSeconds(30)).until(server::isReady);
      Http http = Http.to(server.port());
      assertThat(http.get("/model/registry").json().get("models"))
          .extracting(m -> m.get("model_id").asText())
          .containsExactly("alpha/2", "beta/1");
      // none evicted for a later one, and none left pinned
      assertThat(models.constructions("gamma/1")).isZero();
      assertThat(models.constructions("delta/1")).isZero();
      assertThat(http.get("/model/registry").json().get("models"))
          .allSatisfy(m -> assertThat(m.get("pinned").asBoolean()).isFalse());
      // what did not fit loads on demand, and is ready meanwhile
      assertThat(http.get("/v2/models/gamma/ready").status()).isEqualTo(200);
    } finally {
      server.close();
    }
  }
}
