package dev.modelkeeper.server.http;

import dev.modelkeeper.server.errors.Failure;
import dev.modelkeeper.server.errors.PathRedaction;
import io.javalin.http.HttpResponseException;
import java.lang.System.Logger.Level;

/**
 * The one place where failures become HTTP responses: the status of the failure's {@link
 * Failure.Kind}, a JSON body {@code {"error": "..."}}, {@code Retry-After} on 503 and {@code
 * WWW-Authenticate} on 401. Javalin's own {@link HttpResponseException}s (unknown route 404, body
 * too large 413, ...) keep their status. Stateless and thread-safe.
 */
public final class ErrorMapper {

  private static final System.Logger LOG = System.getLogger(ErrorMapper.class.getName());

  private final Json json;
  private final PathRedaction redaction;

  /** Errors as {@code json}, the server's folders taken out of them by {@code redaction}. */
  public ErrorMapper(Json json, PathRedaction redaction) {
    this.json = json;
    this.redaction = redaction;
  }

  /** The response for {@code failure} of request {@code requestId}. */
  public HttpResult toResult(Throwable failure, String requestId) {
    if (Failure.unwrap(failure) instanceof HttpResponseException e) {
      if (e.getStatus() >= 500) {
        LOG.log(Level.ERROR, "request " + requestId + " failed with " + e.getStatus(), e);
      }
      return error(e.getStatus(), redaction.apply(e.getMessage()));
    }
    Failure f = Failure.of(failure, requestId).redacted(redaction);
    HttpResult r = error(status(f.kind()), f.message());
    if (f.kind() == Failure.Kind.UNAUTHENTICATED) {
      r = r.withHeader("WWW-Authenticate", "Bearer");
    }
    if (f.retryAfter() != null) {
      long seconds = Math.max(1, (f.retryAfter().toMillis() + 999) / 1000);
      r = r.withHeader("Retry-After", Long.toString(seconds));
    }
    return r;
  }

  /** The HTTP status of each kind of failure. */
  static int status(Failure.Kind kind) {
    return switch (kind) {
      case BAD_REQUEST, UNSERVABLE, UNSUPPORTED -> 400;
      case UNAUTHENTICATED -> 401;
      case FORBIDDEN -> 403;
      case NOT_FOUND -> 404;
      case TIMEOUT -> 408;
      case CONFLICT -> 409;
      case TOO_LARGE -> 413;
      case UNSUPPORTED_MEDIA_TYPE -> 415;
      case INTERNAL -> 500;
      case CANCELLED, UNAVAILABLE -> 503;
      case INSUFFICIENT_STORAGE -> 507;
    };
  }

  /** A JSON error response; also used by routes that answer an error without an exception. */
  HttpResult error(int status, String message) {
    return HttpResult.json(status, json.error(message == null ? "unknown error" : message));
  }
}
