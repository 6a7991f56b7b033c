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
import io.javalin.http.HttpResponseException;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * The one place where failures become HTTP responses: a status chosen by the exception's type
 * only (never its message), a JSON body {@code {"error": "..."}}, {@code Retry-After} on 503, and
 * a log line with the request ID for every 5xx. Stateless and thread-safe.
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
 *   <tr><td>anything else (ModelLoadException, InferenceException, bugs)</td><td>500</td></tr>
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
    Throwable e = unwrap(failure);
    if (e instanceof ModelNotFoundException) {
      return error(404, e.getMessage());
    }
    if (e instanceof InvalidInputException
        || e instanceof InvalidModelIdException
        || e instanceof BadRequestException
        || e instanceof NotReadyException) {
      return error(400, e.getMessage());
    }
    if (e instanceof UnauthorizedException) {
      return error(401, e.getMessage()).withHeader("WWW-Authenticate", "Bearer");
    }
    if (e instanceof ForbiddenException) {
      return error(403, e.getMessage());
    }
    if (e instanceof RequestTimeoutException) {
      return error(408, e.getMessage());
    }
    if (e instanceof ConflictException) {
      return error(409, e.getMessage());
    }
    if (e instanceof PayloadTooLargeException) {
      return error(413, e.getMessage());
    }
    if (e instanceof UnsupportedMediaTypeException) {
      return error(415, e.getMessage());
    }
    if (e instanceof ModelTooLargeException) {
      return error(507, e.getMessage());
    }
    if (e instanceof HttpResponseException) {
      int status = ((HttpResponseException) e).getStatus();
      if (status >= 500) {
        LOG.log(Level.ERROR, "request " + requestId + " failed with " + status, e);
      }
      return error(status, e.getMessage());
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
      LOG.log(Level.WARNING, "request {0}: {1}", requestId, e.getMessage());
      return unavailable(e, DOWNLOAD_RETRY);
    }
    if (e instanceof UnavailableException) {
      return unavailable(e, ((UnavailableException) e).retryAfter());
    }
    LOG.log(Level.ERROR, "request " + requestId + " failed", e);
    if (e instanceof ModelLoadException || e instanceof InferenceException) {
      return error(500, e.getMessage() + " (request " + requestId + ")");
    }
    return error(
        500, "internal server error; the server log has the details of request " + requestId);
  }

  private HttpResult unavailable(Throwable e, Duration retryAfter) {
    long seconds = Math.max(1, (retryAfter.toMillis() + 999) / 1000);
    return error(503, e.getMessage()).withHeader("Retry-After", Long.toString(seconds));
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
