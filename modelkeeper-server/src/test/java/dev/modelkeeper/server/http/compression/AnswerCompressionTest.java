package dev.modelkeeper.server.http.compression;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.zip.GZIPInputStream;
import java.util.zip.InflaterInputStream;
import org.junit.jupiter.api.Test;

/** Answers compressed as clients ask, readable by the JDK's own gzip and zlib readers. */
class AnswerCompressionTest {

  private static final byte[] BODY =
      "{\"outputs\":[0.125,0.25,0.5]}".repeat(200).getBytes(StandardCharsets.UTF_8);

  @Test
  void theClientsFirstChoiceByWeight_isChosen_forAnswersWorthCompressing() {
    assertThat(AnswerCompression.choose("gzip, deflate", BODY.length)).isEqualTo("gzip");
    assertThat(AnswerCompression.choose("deflate;q=0.9, gzip;q=0.5", BODY.length))
        .isEqualTo("deflate");
    assertThat(AnswerCompression.choose("gzip;q=0, br", BODY.length)).isNull();
    assertThat(AnswerCompression.choose("br, zstd", BODY.length)).isNull();
    assertThat(AnswerCompression.choose(null, BODY.length)).isNull();
    assertThat(AnswerCompression.choose("gzip", AnswerCompression.MIN_BYTES - 1)).isNull();
  }

  @Test
  void gzipAndDeflateAnswers_inflateToTheBody() throws Exception {
    byte[] gzip = AnswerCompression.compress(BODY, "gzip");
    byte[] deflate = AnswerCompression.compress(BODY, "deflate");
    assertThat(gzip.length).isLessThan(BODY.length / 4);
    try (InputStream in = new GZIPInputStream(new ByteArrayInputStream(gzip))) { // checks CRC
      assertThat(in.readAllBytes()).isEqualTo(BODY);
    }
    try (InputStream in = new InflaterInputStream(new ByteArrayInputStream(deflate))) {
      assertThat(in.readAllBytes()).isEqualTo(BODY);
    }
  }
}
