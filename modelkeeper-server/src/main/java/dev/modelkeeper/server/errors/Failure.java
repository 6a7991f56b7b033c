package dev.modelkeeper.server.errors;

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
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.function.BiFunction;

/**
 * What went wrong with a request, in the engine's terms: a {@link Kind}, the message the client
 * sees, and for {@link Kind#UNAVAILABLE} when to retry. Each transport turns the kind into its own
 * status (HTTP's in {@code ErrorMapper}, gRPC's in {@code GrpcErrors}), so both answer a failure
 * alike. Immutable and thread-safe.
 *
 * <p>Messages that clients match start with Triton's words where Triton has them: {@value
 * #UNKNOWN_MODEL} for a model the repository does not hold, {@value #FAILED_LOAD} for a model that
 * cannot be loaded; ModelKeeper's detail follows.
 *
 * <p>The kind is chosen by the exception's type only, never its message: the server's own
 * exceptions carry theirs ({@link ServerException}); those of the libraries below it are mapped by
 * {@link #FOREIGN}, one row per type, the first whose type matches. Anything else is {@link
 * Kind#INTERNAL}, a bug.
 *
 * <p>{@link #of} is also the one place that logs a failure: every {@link Kind#INTERNAL} at ERROR
 * with the stack trace and the request ID, but a model's failed load (the model manager logs that
 * once per streak of failures, naming the model); a client that left at DEBUG.
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

  /** Triton's words for a load that failed, which clients match, before ModelKeeper's detail. */
  public static final String FAILED_LOAD = "failed to load";

  /** Triton's words for a model it does not know, before ModelKeeper's detail. */
  public static final String UNKNOWN_MODEL = "Request for unknown model: ";

  private static final System.Logger LOG = System.getLogger(Failure.class.getName());
  private static final Duration SHORT_RETRY = Duration.ofSeconds(1);
  private static final Duration DOWNLOAD_RETRY = Duration.ofSeconds(5);

  public Failure {
    message = message == null ? "unknown error" : message;
  }

  private Failure(Kind kind, String message) {
    this(kind, message, null);
  }

  /** How one type of another layer's exception is answered. */
  private record Row(Class<? extends Throwable> type, BiFunction<Throwable, String, Failure> map) {}

  /** The exceptions of the layers below the server, by type; the first row that matches wins. */
  private static final List<Row> FOREIGN =
      List.of(
          row(
              ModelNotFoundException.class,
              (e, id) -> new Failure(Kind.NOT_FOUND, UNKNOWN_MODEL + e.getMessage())),
          row(InvalidInputException.class, (e, id) -> plain(Kind.BAD_REQUEST, e)),
          row(InvalidModelIdException.class, (e, id) -> plain(Kind.BAD_REQUEST, e)),
          row(ModelTooLargeException.class, (e, id) -> plain(Kind.INSUFFICIENT_STORAGE, e)),
          row(
              CancellationException.class,
              (e, id) -> {
                LOG.log(Level.DEBUG, "request {0}: cancelled before its answer", id);
                return new Failure(Kind.CANCELLED, "the request was cancelled", null);
              }),
          // logged once per streak by the model manager; the same answer every time, no retry
          row(
              ModelUnservableException.class,
              (e, id) ->
                  new Failure(
                      ((ModelUnservableException) e).unsupported()
                          ? Kind.UNSUPPORTED
                          : Kind.UNSERVABLE,
                      failedLoad(e.getMessage()))),
          row(
              LoadBackoffException.class,
              (e, id) -> unavailable(e, ((LoadBackoffException) e).retryAfter())),
          row(CapacityExceededException.class, (e, id) -> unavailable(e, SHORT_RETRY)),
          row(LockTimeoutException.class, (e, id) -> unavailable(e, SHORT_RETRY)),
          row(LifecycleInterruptedException.class, (e, id) -> unavailable(e, SHORT_RETRY)),
          row(
              ArtifactDownloadException.class,
              (e, id) -> {
                // the repository logs a store it cannot list once per problem, and the manager a
                // failed download once per streak of failed loads: one more line per request would
                // flood the log
                LOG.log(Level.DEBUG, "request {0}: {1}", id, e.getMessage());
                return unavailable(e, DOWNLOAD_RETRY);
              }),
          // the model's files or configuration, logged once per streak where the load failed
          row(
              ModelLoadException.class,
              (e, id) ->
                  new Failure(
                      Kind.INTERNAL, failedLoad(e.getMessage()) + " (request " + id + ")", null)),
          row(
              InferenceException.class,
              (e, id) -> {
                if (e.getCause() == null) { // a model's own failure, said in full by its message
                  LOG.log(Level.ERROR, "request {0} failed: {1}", id, e.getMessage());
                } else {
                  LOG.log(Level.ERROR, "request " + id + " failed", e);
                }
                return new Failure(Kind.INTERNAL, e.getMessage() + " (request " + id + ")", null);
              }));

  /** The failure {@code thrown} while serving request {@code requestId}, logged as above. */
  public static Failure of(Throwable thrown, String requestId) {
    Throwable e = unwrap(thrown);
    if (e instanceof ServerException) {
      ServerException s = (ServerException) e;
      return new Failure(s.kind(), e.getMessage(), s.retryAfter());
    }
    for (Row r : FOREIGN) {
      if (r.type().isInstance(e)) {
        return r.map().apply(e, requestId);
      }
    }
    LOG.log(Level.ERROR, "request " + requestId + " failed", e);
    return new Failure(
        Kind.INTERNAL,
        "internal server error; the server log has the details of request " + requestId);
  }

  /** {@code message} starting with Triton's words for a failed load. */
  public static String failedLoad(String message) {
    return message != null && message.startsWith(FAILED_LOAD)
        ? message
        : FAILED_LOAD + ": " + message;
  }

  private static Row row(
      Class<? extends Throwable> type, BiFunction<Throwable, String, Failure> map) {
    return new Row(type, map);
  }

  private static Failure plain(Kind kind, Throwable e) {
    return new Failure(kind, e.getMessage(), null);
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
