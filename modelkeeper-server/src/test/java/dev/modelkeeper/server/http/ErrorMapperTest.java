package dev.modelkeeper.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.modelkeeper.core.CapacityExceededException;
import dev.modelkeeper.core.LeaseDrainTimeoutException;
import dev.modelkeeper.core.LifecycleInterruptedException;
import dev.modelkeeper.core.LoadBackoffException;
import dev.modelkeeper.core.LockTimeoutException;
import dev.modelkeeper.core.ModelLoadException;
import dev.modelkeeper.core.ModelNotFoundException;
import dev.modelkeeper.core.ModelTooLargeException;
import dev.modelkeeper.onnx.InferenceException;
import dev.modelkeeper.onnx.InvalidInputException;
import dev.modelkeeper.onnx.InvalidModelIdException;
import dev.modelkeeper.onnx.remote.ArtifactDownloadException;
import dev.modelkeeper.server.auth.UnauthorizedException;
import dev.modelkeeper.server.errors.BadRequestException;
import dev.modelkeeper.server.errors.ConflictException;
import dev.modelkeeper.server.errors.NotReadyException;
import dev.modelkeeper.server.errors.PathRedaction;
import dev.modelkeeper.server.errors.PayloadTooLargeException;
import dev.modelkeeper.server.errors.UnavailableException;
import io.javalin.http.HttpResponseException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

/** The exception-type to status table, one row per type. */
class ErrorMapperTest {

  private final ErrorMapper mapper = new ErrorMapper(new Json(), PathRedaction.NONE);

  private HttpResult map(Throwable t) {
    return mapper.toResult(t, "req-1");
  }

  private static String body(HttpResult r) {
    return new String(r.body(), StandardCharsets.UTF_8);
  }

  @Test
  void toResult_modelNotFound_is404_inTritonsWordsFirst() {
    HttpResult r = map(new ModelNotFoundException("no model 'x'"));
    assertThat(r.status()).isEqualTo(404);
    assertThat(body(r)).isEqualTo("{\"error\":\"Request for unknown model: no model 'x'\"}");
    assertThat(r.contentType()).isEqualTo("application/json");
  }

  @Test
  void toResult_badInputsAndIds_are400() {
    assertThat(map(new InvalidInputException("bad tensor")).status()).isEqualTo(400);
    assertThat(map(new InvalidModelIdException("bad id")).status()).isEqualTo(400);
    assertThat(map(new BadRequestException("malformed JSON")).status()).isEqualTo(400);
    assertThat(map(new NotReadyException("starting")).status()).isEqualTo(400);
  }

  @Test
  void toResult_unauthorized_is401WithChallenge() {
    HttpResult r = map(new UnauthorizedException("token please"));
    assertThat(r.status()).isEqualTo(401);
    assertThat(r.headers()).containsEntry("WWW-Authenticate", "Bearer");
  }

  @Test
  void toResult_frontDoorRefusals_haveTheirOwnStatuses() {
    assertThat(map(new ForbiddenException("origin")).status()).isEqualTo(403);
    assertThat(map(new RequestTimeoutException("slow")).status()).isEqualTo(408);
    assertThat(map(new PayloadTooLargeException("big")).status()).isEqualTo(413);
    assertThat(map(new UnsupportedMediaTypeException("gzip")).status()).isEqualTo(415);
  }

  @Test
  void toResult_modelLargerThanTheWholeBudget_is507WithoutRetryAfter() {
    HttpResult r = map(new ModelTooLargeException("too big for the budget"));
    assertThat(r.status()).isEqualTo(507);
    assertThat(r.headers()).doesNotContainKey("Retry-After");
  }

  @Test
  void toResult_conflict_is409() {
    assertThat(map(new ConflictException("alias taken")).status()).isEqualTo(409);
  }

  @Test
  void toResult_javalinResponseException_keepsItsStatus() {
    HttpResult r = map(new HttpResponseException(413, "Content Too Large"));
    assertThat(r.status()).isEqualTo(413);
    assertThat(body(r)).contains("Content Too Large");
  }

  @Test
  void toResult_capacityAndTimeouts_are503WithRetryAfter() {
    for (Throwable t :
        new Throwable[] {
          new CapacityExceededException("full"),
          new LockTimeoutException("slow lifecycle"),
          new LeaseDrainTimeoutException("leases stay"),
          new LifecycleInterruptedException("interrupted"),
          new ArtifactDownloadException("store down"),
          new UnavailableException("busy", Duration.ofSeconds(1))
        }) {
      HttpResult r = map(t);
      assertThat(r.status()).as(t.toString()).isEqualTo(503);
      assertThat(r.headers()).as(t.toString()).containsKey("Retry-After");
    }
  }

  @Test
  void toResult_loadBackoff_is503WithItsWindowRoundedUp() {
    HttpResult r =
        map(
            new LoadBackoffException(
                "backing off", Duration.ofMillis(2500), new RuntimeException()));
    assertThat(r.status()).isEqualTo(503);
    assertThat(r.headers()).containsEntry("Retry-After", "3");
  }

  @Test
  void toResult_loadAndInferenceFailures_are500WithTheirMessage() {
    HttpResult load = map(new ModelLoadException("corrupt weights"));
    assertThat(load.status()).isEqualTo(500);
    assertThat(body(load)).contains("corrupt weights").contains("req-1");
    assertThat(map(new InferenceException("runtime failed", null)).status()).isEqualTo(500);
  }

  @Test
  void toResult_unexpectedException_is500WithoutItsDetails() {
    HttpResult r = map(new IllegalStateException("secret internals"));
    assertThat(r.status()).isEqualTo(500);
    assertThat(body(r)).contains("req-1").doesNotContain("secret internals");
  }

  @Test
  void toResult_wrappedFailure_mapsTheCause() {
    assertThat(map(new CompletionException(new ModelNotFoundException("x"))).status())
        .isEqualTo(404);
    assertThat(map(new ExecutionException(new CapacityExceededException("x"))).status())
        .isEqualTo(503);
  }
}
