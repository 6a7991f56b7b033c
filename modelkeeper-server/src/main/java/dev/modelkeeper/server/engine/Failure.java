package dev.modelkeeper.server.engine;

import dev.modelkeeper.core.CapacityExceededException;
import dev.modelkeeper.core.LifecycleInterruptedException;
import dev.modelkeeper.core.LoadBackoffException;
import dev.modelkeeper.core.LockTimeoutException;
import dev.modelkeeper.core.ModelLoadException;
import dev.modelkeeper.core.ModelNotFoundException;
import dev.modelkeeper.core.ModelTooLargeException;
import dev.modelkeeper.core.ModelUnservableException;
import dev.modelkeeper.onnx.InferenceException;
import dev.modelkeeper.onnx.InvalidInputException;
import dev.modelkeeper.onnx.InvalidModelIdException;
import dev.modelkeeper.onnx.remote.ArtifactDownloadException;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * What went wrong with a request, in the engine's terms: a {@link Kind} chosen by the exception's
 * type only (never its message), the message the client sees, and for {@link Kind#UNAVAILABLE} when
 * to retry. Each transport turns the kind into its own status (HTTP's in {@code ErrorMapper},
 * gRPC's in {@code GrpcErrors}), so both answer a failure alike. Immutable and thread-safe.
 *
 * <p>{@link #of} is also the one place that logs a failure: every {@link Kind#INTERNAL} at ERROR
 * with the stack trace and the request ID, but a model's failed load (the model manager logs that
 * once per streak of failures, naming the model); a client that left at DEBUG.
 *
 * <table>
 *   <caption>mapping</caption>
 *   <tr><th>type</th><th>kind</th></tr>
 *   <tr><td>ModelNotFoundException</td><td>NOT_FOUND</td></tr>
 *   <tr><td>InvalidInputException, InvalidModelIdException, BadRequestException,
 *       NotReadyException</td><td>BAD_REQUEST</td></tr>
 *   <tr><td>UnauthorizedException</td><td>UNAUTHENTICATED</td></tr>
 *   <tr><td>ForbiddenException</td><td>FORBIDDEN</td></tr>
 *   <tr><td>RequestTimeoutException</td><td>TIMEOUT</td></tr>
 *   <tr><td>ConflictException</td><td>CONFLICT</td></tr>
 *   <tr><td>PayloadTooLargeException</td><td>TOO_LARGE</td></tr>
 *   <tr><td>UnsupportedMediaTypeException</td><td>UNSUPPORTED_MEDIA_TYPE</td></tr>
 *   <tr><td>ModelUnservableException, its files broken (corrupt model, bad config)</td>
 *       <td>UNSERVABLE, no retry: the same files fail the same way</td></tr>
 *   <tr><td>ModelUnservableException, a feature not served (a non-tensor input, a type the
 *       runtime's Java API cannot create)</td><td>UNSUPPORTED, no retry</td></tr>
 *   <tr><td>ModelTooLargeException (more than the whole byte budget)</td>
 *       <td>INSUFFICIENT_STORAGE, no retry: waiting cannot help</td></tr>
 *   <tr><td>CapacityExceededException, LockTimeoutException, LoadBackoffException,
 *       LifecycleInterruptedException, ArtifactDownloadException, UnavailableException</td>
 *       <td>UNAVAILABLE with a retry delay</td></tr>
 *   <tr><td>CancellationException (the client left or its deadline passed)</td>
 *       <td>CANCELLED</td></tr>
 *   <tr><td>anything else (ModelLoadException, InferenceException, bugs)</td><td>INTERNAL</td></tr>
 * </table>
 *
 * @param kind what kind of failure
 * @param message what the client is told
 * @param retryAfter when a client may retry an {@link Kind#UNAVAILABLE} request; else null
 */
public record Failure(Kind kind, String message, Duration retryAfter) {

  /** The kinds of failure, each answered with one status per transport. */
  public enum Kind {
    BAD_REQUEST,
    UNAUTHENTICATED,
    FORBIDDEN,
    NOT_FOUND,
    TIMEOUT,
    CONFLICT,
    TOO_LARGE,
    UNSUPPORTED_MEDIA_TYPE,
    CANCELLED,
    INTERNAL,
    UNAVAILABLE,
    INSUFFICIENT_STORAGE,
    /** The model's files are broken: refused the same way until they change. */
    UNSERVABLE,
    /** The model needs something ModelKeeper does not serve: refused the same way. */
    UNSUPPORTED
  }

  private static final System.Logger LOG = System.getLogger(Failure.class.getName());
  private static final Duration SHORT_RETRY = Duration.ofSeconds(1);
  private static final Duration DOWNLOAD_RETRY = Duration.ofSeconds(5);

  public Failure {
    message = message == null ? "unknown error" : message;
  }

  private Failure(Kind kind, String message) {
    this(kind, message, null);
  }

  /** The failure {@code thrown} while serving request {@code requestId}, logged as above. */
  public static Failure of(Throwable thrown, String requestId) {
    Throwable e = unwrap(thrown);
    if (e instanceof ModelNotFoundException) {
      return new Failure(Kind.NOT_FOUND, e.getMessage());
    }
    if (e instanceof InvalidInputException
        || e instanceof InvalidModelIdException
        || e instanceof BadRequestException
        || e instanceof NotReadyException) {
      return new Failure(Kind.BAD_REQUEST, e.getMessage());
    }
    if (e instanceof UnauthorizedException) {
      return new Failure(Kind.UNAUTHENTICATED, e.getMessage());
    }
    if (e instanceof ForbiddenException) {
      return new Failure(Kind.FORBIDDEN, e.getMessage());
    }
    if (e instanceof RequestTimeoutException) {
      return new Failure(Kind.TIMEOUT, e.getMessage());
    }
    if (e instanceof ConflictException) {
      return new Failure(Kind.CONFLICT, e.getMessage());
    }
    if (e instanceof PayloadTooLargeException) {
      return new Failure(Kind.TOO_LARGE, e.getMessage());
    }
    if (e instanceof UnsupportedMediaTypeException) {
      return new Failure(Kind.UNSUPPORTED_MEDIA_TYPE, e.getMessage());
    }
    if (e instanceof ModelTooLargeException) {
      return new Failure(Kind.INSUFFICIENT_STORAGE, e.getMessage());
    }
    if (e instanceof CancellationException) {
      LOG.log(Level.DEBUG, "request {0}: cancelled before its answer", requestId);
      return new Failure(Kind.CANCELLED, "the request was cancelled");
    }
    if (e instanceof ModelUnservableException) {
      // logged once per streak by the model manager; the same answer every time, no retry
      ModelUnservableException u = (ModelUnservableException) e;
      return new Failure(u.unsupported() ? Kind.UNSUPPORTED : Kind.UNSERVABLE, e.getMessage());
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
      return new Failure(Kind.INTERNAL, e.getMessage() + " (request " + requestId + ")");
    }
    LOG.log(Level.ERROR, "request " + requestId + " failed", e);
    if (e instanceof InferenceException) {
      return new Failure(Kind.INTERNAL, e.getMessage() + " (request " + requestId + ")");
    }
    return new Failure(
        Kind.INTERNAL,
        "internal server error; the server log has the details of request " + requestId);
  }

  /**
   * This failure with the server's own folders taken out of its message (see {@link
   * PathRedaction}).
   */
  public Failure redacted(PathRedaction redaction) {
    return new Failure(kind, redaction.apply(message), retryAfter);
  }

  private static Failure unavailable(Throwable e, Duration retryAfter) {
    return new Failure(
        Kind.UNAVAILABLE, e.getMessage() == null ? "unavailable" : e.getMessage(), retryAfter);
  }

  /** {@code t} without the wrappers that futures put around a failure. */
  public static Throwable unwrap(Throwable t) {
    Throwable e = t;
    while ((e instanceof CompletionException || e instanceof ExecutionException)
        && e.getCause() != null) {
      e = e.getCause();
    }
    return e;
  }
}
