package dev.modelkeeper.server;

import dev.modelkeeper.core.CapacityExceededException;
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
import io.grpc.Status;
import io.javalin.http.HttpResponseException;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * The one place where failures become HTTP responses: a status chosen by the exception's type only
 * (never its message), a JSON body {@code {"error": "..."}}, {@code Retry-After} on 503, and a log
 * line with the request ID for every 5xx but a model's failed load (the model manager logs that
 * once per streak of failures, naming the model). gRPC calls get the status code that corresponds
 * to the HTTP status ({@link #GRPC_CODES}), so both transports answer a failure alike. Stateless
 * and thread-safe.
 *
 * <table>
 *   <caption>mapping</caption>
 *   <tr><th>type</th><th>status</th></tr>
 *   <tr><td>ModelNotFoundException</td><td>404</td></tr>
 *   <tr><td>InvalidInputException, InvalidModelIdException, BadRequestException,
 *       NotReadyException</td><td>400</td></tr>
 *   <tr><td>UnauthorizedException</td><td>401</td></tr>
 *   <tr><td>ForbiddenException</td><td>403</td></tr>
 *   <tr><td>RequestTimeoutException</td><td>408</td></tr>
 *   <tr><td>ConflictException</td><td>409</td></tr>
 *   <tr><td>PayloadTooLargeException</td><td>413</td></tr>
 *   <tr><td>UnsupportedMediaTypeException</td><td>415</td></tr>
 *   <tr><td>ModelTooLargeException (more than the whole byte budget)</td><td>507, no
 *       Retry-After: waiting cannot help</td></tr>
 *   <tr><td>Javalin's HttpResponseException (unknown route 404, body too large 413, ...)</td>
 *       <td>its own</td></tr>
 *   <tr><td>CapacityExceededException, LockTimeoutException, LoadBackoffException,
 *       LifecycleInterruptedException, ArtifactDownloadException, UnavailableException</td>
 *       <td>503 + Retry-After</td></tr>
 *   <tr><td>anything else (ModelLoadException, InferenceException, bugs)</td><td>500; logged
 *       at ERROR with the stack trace, but for ModelLoadException: the model's own files, which
 *       the model manager logs in one line per streak of failures</td></tr>
 * </table>
 */
final class ErrorMapper {

  private static final System.Logger LOG = System.getLogger(ErrorMapper.class.getName());
  private static final Duration SHORT_RETRY = Duration.ofSeconds(1);
  private static final Duration DOWNLOAD_RETRY = Duration.ofSeconds(5);

  private final Json json;

  ErrorMapper(Json json) {
    this.json = json;
  }

  /** The response for {@code failure} of request {@code requestId}. */
  HttpResult toResult(Throwable failure, String requestId) {
    Mapped m = map(failure, requestId);
    HttpResult r = error(m.status(), m.message());
    if (m.status() == 401) {
      r = r.withHeader("WWW-Authenticate", "Bearer");
    }
    if (m.retryAfter() != null) {
      long seconds = Math.max(1, (m.retryAfter().toMillis() + 999) / 1000);
      r = r.withHeader("Retry-After", Long.toString(seconds));
    }
    return r;
  }

  /**
   * The gRPC status for {@code failure} of call {@code requestId}: the code that corresponds to the
   * HTTP status the same failure gets (see {@link #GRPC_CODES}), with the same message.
   */
  Status toStatus(Throwable failure, String requestId) {
    Mapped m = map(failure, requestId);
    return GRPC_CODES.getOrDefault(m.status(), Status.UNKNOWN).withDescription(m.message());
  }

  /** The gRPC code of each HTTP status this mapper answers. */
  static final Map<Integer, Status> GRPC_CODES =
      Map.ofEntries(
          Map.entry(400, Status.INVALID_ARGUMENT),
          Map.entry(401, Status.UNAUTHENTICATED),
          Map.entry(403, Status.PERMISSION_DENIED),
          Map.entry(404, Status.NOT_FOUND),
          Map.entry(408, Status.DEADLINE_EXCEEDED),
          Map.entry(409, Status.ALREADY_EXISTS),
          Map.entry(413, Status.RESOURCE_EXHAUSTED),
          Map.entry(415, Status.INVALID_ARGUMENT),
          Map.entry(500, Status.INTERNAL),
          Map.entry(503, Status.UNAVAILABLE),
          Map.entry(507, Status.RESOURCE_EXHAUSTED));

  /** A failure's status, message and, for 503, when to retry. */
  private record Mapped(int status, String message, Duration retryAfter) {
    Mapped(int status, String message) {
      this(status, message == null ? "unknown error" : message, null);
    }
  }

  /** The one mapping from exception type to status. */
  private Mapped map(Throwable failure, String requestId) {
    Throwable e = unwrap(failure);
    if (e instanceof ModelNotFoundException) {
      return new Mapped(404, e.getMessage());
    }
    if (e instanceof InvalidInputException
        || e instanceof InvalidModelIdException
        || e instanceof BadRequestException
        || e instanceof NotReadyException) {
      return new Mapped(400, e.getMessage());
    }
    if (e instanceof UnauthorizedException) {
      return new Mapped(401, e.getMessage());
    }
    if (e instanceof ForbiddenException) {
      return new Mapped(403, e.getMessage());
    }
    if (e instanceof RequestTimeoutException) {
      return new Mapped(408, e.getMessage());
    }
    if (e instanceof ConflictException) {
      return new Mapped(409, e.getMessage());
    }
    if (e instanceof PayloadTooLargeException) {
      return new Mapped(413, e.getMessage());
    }
    if (e instanceof UnsupportedMediaTypeException) {
      return new Mapped(415, e.getMessage());
    }
    if (e instanceof ModelTooLargeException) {
      return new Mapped(507, e.getMessage());
    }
    if (e instanceof HttpResponseException) {
      int status = ((HttpResponseException) e).getStatus();
      if (status >= 500) {
        LOG.log(Level.ERROR, "request " + requestId + " failed with " + status, e);
      }
      return new Mapped(status, e.getMessage());
    }
    if (e instanceof LoadBackoffException) {
      return unavailable(e, ((LoadBackoffException) e).retryAfter());
    }
    if (e instanceof CapacityExceededException
        || e instanceof LockTimeoutException
        || e instanceof LifecycleInterruptedException) {
      return unavailable(e, SHORT_RETRY);
    }
    if (e instanceof ArtifactDownloadException) {
      // the repository logs a store it cannot list once per problem, and the manager a failed
      // download once per streak of failed loads: one more line per request would flood the log
      LOG.log(Level.DEBUG, "request {0}: {1}", requestId, e.getMessage());
      return unavailable(e, DOWNLOAD_RETRY);
    }
    if (e instanceof UnavailableException) {
      return unavailable(e, ((UnavailableException) e).retryAfter());
    }
    if (e instanceof ModelLoadException) {
      // the model's files or configuration, logged once per streak where the load failed
      return new Mapped(500, e.getMessage() + " (request " + requestId + ")");
    }
    LOG.log(Level.ERROR, "request " + requestId + " failed", e);
    if (e instanceof InferenceException) {
      return new Mapped(500, e.getMessage() + " (request " + requestId + ")");
    }
    return new Mapped(
        500, "internal server error; the server log has the details of request " + requestId);
  }

  private static Mapped unavailable(Throwable e, Duration retryAfter) {
    return new Mapped(503, e.getMessage() == null ? "unavailable" : e.getMessage(), retryAfter);
  }

  /** A JSON error response; also used by routes that answer an error without an exception. */
  HttpResult error(int status, String message) {
    return HttpResult.json(status, json.error(message == null ? "unknown error" : message));
  }

  private static Throwable unwrap(Throwable t) {
    Throwable e = t;
    while ((e instanceof CompletionException || e instanceof ExecutionException)
        && e.getCause() != null) {
      e = e.getCause();
    }
    return e;
  }
}
