package dev.modelkeeper.server.http.compression;

import static org.assertj.core.api.Assertions.assertThat;

import dev.modelkeeper.server.ModelKeeperServer;
import dev.modelkeeper.server.support.TestServer;
import dev.modelkeeper.testkit.FakeModels;
import dev.modelkeeper.testkit.Http;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.zip.DeflaterOutputStream;
import java.util.zip.GZIPOutputStream;
import org.awaitility.Awaitility;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Compressed REST bodies through the whole front door: read when they inflate within the limit,
 * refused 413 after at most the limit when they would inflate past it, their bytes returned.
 */
class CompressedBodiesTest {

  private static final String INFER = "/v2/models/alpha/infer";
  private static final String X =
      "{\"inputs\":[{\"name\":\"x\",\"datatype\":\"FP32\",\"shape\":[2],\"data\":[1,2]}]}";

  private static byte[] compress(String coding, byte[] body, int zeros) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (DeflaterOutputStream z =
        coding.equals("gzip") ? new GZIPOutputStream(out) : new DeflaterOutputStream(out)) {
      z.write(body);
      byte[] chunk = new byte[1 << 16];
      for (int left = zeros; left > 0; left -= chunk.length) {
        z.write(chunk, 0, Math.min(left, chunk.length));
      }
    }
    return out.toByteArray();
  }

  private static Http.Response post(Http http, String coding, byte[] body) {
    return http.send(
        HttpRequest.newBuilder(URI.create(http.base() + INFER))
            .timeout(Duration.ofSeconds(30))
            .header("Content-Type", "application/json")
            .header("Content-Encoding", coding)
            .POST(HttpRequest.BodyPublishers.ofByteArray(body)));
  }

  @ParameterizedTest
  @ValueSource(strings = {"gzip", "deflate"})
  void aCompressedBody_isRead_andABomb_is413AfterTheLimit(String coding) throws Exception {
    try (ModelKeeperServer server =
        TestServer.fake(
            FakeModels.of("alpha/1"), b -> b.budgets(m -> m.withMaxRequestBytes(1 << 20)))) {
      Http http = Http.to(server.port());
      Http.Response ok =
          post(http, coding, compress(coding, X.getBytes(StandardCharsets.UTF_8), 0));
      assertThat(ok.status()).as(ok.body()).isEqualTo(200);
      assertThat(ok.body()).contains("\"y\"");

      // 256 MiB of zeros after the JSON: about 250 kB on the wire, 256 times the limit inflated
      byte[] bomb = compress(coding, X.getBytes(StandardCharsets.UTF_8), 256 << 20);
      assertThat(bomb.length).isLessThan(1 << 20);
      Http.Response refused = post(http, coding, bomb);
      assertThat(refused.status()).isEqualTo(413);
      assertThat(refused.error())
          .contains("inflates to more than the limit of 1048576 bytes (max-request-bytes)");
      Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> server.inflightBytes() == 0);
      assertThat(
              post(http, coding, compress(coding, X.getBytes(StandardCharsets.UTF_8), 0)).status())
          .isEqualTo(200);
    }
  }
}
