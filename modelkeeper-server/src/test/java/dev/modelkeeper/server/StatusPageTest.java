package dev.modelkeeper.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.modelkeeper.core.ModelLoadException;
import dev.modelkeeper.server.support.TestServer;
import dev.modelkeeper.testkit.FakeModels;
import dev.modelkeeper.testkit.Http;
import dev.modelkeeper.testkit.Http.Response;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The status page at {@code /} and {@code /v2/status}: models, activity and events, as HTML. */
class StatusPageTest {

  private static final String X =
      "{\"inputs\":[{\"name\":\"x\",\"shape\":[1],\"datatype\":\"FP32\",\"data\":[1]}]}";

  /** The cells of the models table's row for {@code name}. */
  private static List<String> modelRow(String page, String name) {
    Matcher m = Pattern.compile("<tr><td>" + Pattern.quote(name) + "</td>(.*?)</tr>").matcher(page);
    assertThat(m.find()).as("a row for %s in\n%s", name, page).isTrue();
    return List.of(m.group(1).replaceAll("^<td[^>]*>|</td>$", "").split("</td><td[^>]*>", -1));
  }

  @Test
  void page_listsModels_theirActivity_andRecentEvents() throws Exception {
    FakeModels models = FakeModels.of("alpha/1", "beta/1", "gamma/1");
    models.failLoad("beta/1", new ModelLoadException("no <b>weights</b> & no luck"));
    try (ModelKeeperServer server =
        TestServer.fake(
            models,
            b ->
                b.budgets(m -> m.withMaxModels(1))
                    .timeouts(t -> t.withLoadFailureBackoff(Duration.ofMillis(1)))
                    .withPin(List.of()))) {
      Http http = Http.to(server.port());
      assertThat(http.post("/v2/models/beta/infer", X).status()).isEqualTo(500);
      assertThat(http.post("/v2/models/gamma/infer", X).status()).isEqualTo(200);
      for (int i = 0; i < 5; i++) {
        assertThat(http.post("/v2/models/alpha/infer", X).status()).isEqualTo(200);
      }

      Response root = http.get("/");
      assertThat(root.status()).isEqualTo(200);
      assertThat(root.contentType()).startsWith("text/html");
      assertThat(http.get("/v2/status").body()).contains("<table id=\"models\">");
      // the board reads its totals once a second: wait (bounded) for a reading after the runs
      long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
      String page = root.body();
      while (modelRow(page, "alpha").get(6).isEmpty() && System.nanoTime() < deadline) {
        page = http.get("/").body();
      }
      List<String> alpha = modelRow(page, "alpha");
      assertThat(alpha.get(0)).isEqualTo("1"); // version
      assertThat(alpha.get(1)).isEqualTo("READY");
      assertThat(alpha.get(3)).isEqualTo(""); // measured: fake models are not measured
      assertThat(alpha.get(4)).isEqualTo("0"); // leases
      assertThat(alpha.get(6)).isNotEmpty(); // runs per second
      assertThat(alpha.get(8)).startsWith("≤ ").endsWith(" ms"); // p99 run
      assertThat(modelRow(page, "gamma").get(1)).isEqualTo("UNAVAILABLE");
      assertThat(page)
          .contains("<td>alpha/1</td><td>loaded</td>")
          .contains("<td>gamma/1</td><td>evicted</td><td>count budget</td>")
          .contains("<td>beta/1</td><td>load failed</td>")
          .contains("no &lt;b&gt;weights&lt;/b&gt; &amp; no luck")
          .doesNotContain("<b>weights");
      assertThat(page).containsPattern("Resident models</th><td>1 of at most 1<");
      assertThat(page).containsPattern("<polyline class=\"rps\" points=\"[0-9., ]+\"/>");
    }
  }
}
