package dev.modelkeeper.cli;

import io.opentelemetry.exporter.internal.FailedExportException;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.lang.System.Logger.Level;
import java.net.ConnectException;
import java.net.UnknownHostException;
import java.net.http.HttpTimeoutException;
import java.util.Collection;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The span exporter with its failures reported the way a user can act on them: the first batch that
 * cannot be sent gives one WARN line naming the endpoint and the reason (connection refused,
 * unknown host, timed out, the collector's HTTP status), later failures at most one line a minute
 * with the spans dropped since, and one INFO line when spans get through again. No stack trace: the
 * SDK's own line per failed batch is silenced in the log configuration. Thread-safe.
 */
final class SpanExportReport implements SpanExporter {

  private static final System.Logger LOG = System.getLogger(SpanExportReport.class.getName());
  private static final long REPEAT_NANOS = TimeUnit.MINUTES.toNanos(1);

  private final SpanExporter exporter;
  private final String endpoint;
  private final LongSupplier nanoTime;
  private boolean failing;
  private long dropped;
  private long reportedAt;

  SpanExportReport(SpanExporter exporter, String endpoint) {
    this(exporter, endpoint, System::nanoTime);
  }

  SpanExportReport(SpanExporter exporter, String endpoint, LongSupplier nanoTime) {
    this.exporter = exporter;
    this.endpoint = endpoint;
    this.nanoTime = nanoTime;
  }

  @Override
  public CompletableResultCode export(Collection<SpanData> spans) {
    int count = spans.size();
    CompletableResultCode result = exporter.export(spans);
    result.whenComplete(
        () -> {
          if (result.isSuccess()) {
            sent();
          } else {
            notSent(count, result.getFailureThrowable());
          }
        });
    return result;
  }

  private synchronized void sent() {
    if (failing) {
      LOG.log(
          Level.INFO,
          "tracing: spans reach {0} again ({1} were dropped while it could not be reached)",
          endpoint,
          String.valueOf(dropped));
      failing = false;
      dropped = 0;
    }
  }

  private synchronized void notSent(int count, Throwable failure) {
    dropped += count;
    long now = nanoTime.getAsLong();
    if (!failing) {
      failing = true;
      reportedAt = now;
      LOG.log(
          Level.WARNING,
          "tracing: could not send {0} spans to {1} ({2}); spans are dropped until it answers"
              + " (reported again at most once a minute)",
          String.valueOf(count),
          endpoint,
          reason(failure));
    } else if (now - reportedAt >= REPEAT_NANOS) {
      reportedAt = now;
      LOG.log(
          Level.WARNING,
          "tracing: still cannot send spans to {0} ({1}); {2} dropped so far",
          endpoint,
          reason(failure),
          String.valueOf(dropped));
    }
  }

  /** Why an export failed, in words. */
  static String reason(Throwable failure) {
    if (failure instanceof FailedExportException.HttpExportException
        && ((FailedExportException.HttpExportException) failure).failedWithResponse()) {
      return "the collector answered HTTP "
          + ((FailedExportException.HttpExportException) failure).getResponse().getStatusCode();
    }
    String last = null;
    for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof ConnectException) {
        return "connection refused";
      }
      if (t instanceof UnknownHostException) {
        return "unknown host " + t.getMessage();
      }
      if (t instanceof HttpTimeoutException) {
        return "timed out";
      }
      if (t.getMessage() != null) {
        last = t.getMessage();
      }
    }
    return last != null ? last : "the export failed";
  }

  @Override
  public CompletableResultCode flush() {
    return exporter.flush();
  }

  @Override
  public CompletableResultCode shutdown() {
    return exporter.shutdown();
  }

  @Override
  public String toString() {
    return exporter.toString();
  }
}
