package dev.modelkeeper.server.observability;

import dev.modelkeeper.server.request.RequestTrace;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import java.util.concurrent.TimeUnit;

/**
 * The server span of one request and the child spans the engine and the transport record in it:
 * {@code queue} (waiting for a slot or a batch), {@code load} (the run waited for the model to
 * load), {@code run} (the model's run, with the batch's size) and {@code encode} (the answer's
 * encoding). Children are recorded once they are over, from {@link System#nanoTime()} instants, so
 * nothing is kept open across threads; the OpenTelemetry form of {@link RequestTrace}. Thread-safe.
 */
public final class RequestSpan implements RequestTrace {

  public static final AttributeKey<String> MODEL_NAME = AttributeKey.stringKey("modelkeeper.model");
  public static final AttributeKey<String> MODEL_VERSION =
      AttributeKey.stringKey("modelkeeper.model.version");
  public static final AttributeKey<Long> BATCH_REQUESTS =
      AttributeKey.longKey("modelkeeper.batch.requests");
  public static final AttributeKey<Long> BATCH_ROWS =
      AttributeKey.longKey("modelkeeper.batch.rows");
  public static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("modelkeeper.outcome");

  private final Tracer tracer;
  private final Span span;
  private final Context context;
  private final long epochNanosAtStart;
  private final long nanoTimeAtStart;

  RequestSpan(
      Tracer tracer, Span span, Context context, long epochNanosAtStart, long nanoTimeAtStart) {
    this.tracer = tracer;
    this.span = span;
    this.context = context;
    this.epochNanosAtStart = epochNanosAtStart;
    this.nanoTimeAtStart = nanoTimeAtStart;
  }

  @Override
  public boolean recording() {
    return true;
  }

  @Override
  public void model(String name, String version) {
    set(MODEL_NAME, name);
    set(MODEL_VERSION, version);
  }

  @Override
  public void step(String name, long startNanos, long endNanos) {
    child(name, startNanos, endNanos, Attributes.empty());
  }

  @Override
  public void run(
      String modelKey, int requests, int rows, boolean ok, long startNanos, long endNanos) {
    child(
        "run",
        startNanos,
        endNanos,
        Attributes.of(
            MODEL_NAME,
            modelKey,
            BATCH_REQUESTS,
            (long) requests,
            BATCH_ROWS,
            (long) rows,
            OUTCOME,
            ok ? "ok" : "failed"));
  }

  @Override
  public void attribute(String key, long value) {
    span.setAttribute(AttributeKey.longKey(key), value);
  }

  /** Sets an attribute of the server span. */
  private <T> void set(AttributeKey<T> key, T value) {
    if (span != null && value != null) {
      span.setAttribute(key, value);
    }
  }

  /** Records a finished child span with {@code attributes}. */
  private void child(String name, long startNanos, long endNanos, Attributes attributes) {
    if (span == null) {
      return;
    }
    tracer
        .spanBuilder(name)
        .setParent(context)
        .setSpanKind(SpanKind.INTERNAL)
        .setStartTimestamp(epochNanos(startNanos), TimeUnit.NANOSECONDS)
        .setAllAttributes(attributes)
        .startSpan()
        .end(epochNanos(Math.max(startNanos, endNanos)), TimeUnit.NANOSECONDS);
  }

  @Override
  public void end(boolean error, String description) {
    if (span == null) {
      return;
    }
    span.setAttribute(OUTCOME, error ? "error" : "ok");
    if (error) {
      span.setStatus(StatusCode.ERROR, description == null ? "" : description);
    }
    span.end();
  }

  private long epochNanos(long nanoTime) {
    return epochNanosAtStart + (nanoTime - nanoTimeAtStart);
  }
}
