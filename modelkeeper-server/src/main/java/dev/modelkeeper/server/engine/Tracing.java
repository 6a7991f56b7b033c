package dev.modelkeeper.server.engine;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapPropagator;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * Where requests' spans go: OpenTelemetry when the server was given it, else nowhere ({@link #OFF},
 * which costs a field read per request). Transports start one server span per request with {@link
 * #serverSpan}, continuing the caller's W3C {@code traceparent}; the engine adds its child spans to
 * it ({@link RequestSpan}). Thread-safe.
 */
public final class Tracing {

  /** No tracing: every span is {@link RequestSpan#NONE}. */
  public static final Tracing OFF = new Tracing(null, null);

  static final String INSTRUMENTATION = "dev.modelkeeper.server";

  private final Tracer tracer;
  private final TextMapPropagator propagator;

  private Tracing(Tracer tracer, TextMapPropagator propagator) {
    this.tracer = tracer;
    this.propagator = propagator;
  }

  /** Spans to {@code openTelemetry}'s tracer, propagated with its propagators. */
  public static Tracing to(OpenTelemetry openTelemetry) {
    return new Tracing(
        openTelemetry.getTracer(INSTRUMENTATION, ServerVersion.get()),
        openTelemetry.getPropagators().getTextMapPropagator());
  }

  public boolean on() {
    return tracer != null;
  }

  /**
   * Starts the server span of one request named {@code name}, child of the span the request's
   * headers carry (read with {@code header}, which is given lower-case names), else a new trace.
   */
  public RequestSpan serverSpan(
      String name, Function<String, String> header, Attributes attributes) {
    if (tracer == null) {
      return RequestSpan.NONE;
    }
    Context parent = propagator.extract(Context.root(), header, HEADERS);
    Span span =
        tracer
            .spanBuilder(name)
            .setParent(parent)
            .setSpanKind(SpanKind.SERVER)
            .setAllAttributes(attributes)
            .startSpan();
    return new RequestSpan(
        tracer,
        span,
        Context.root().with(span),
        TimeUnit.MILLISECONDS.toNanos(System.currentTimeMillis()),
        System.nanoTime());
  }

  private static final TextMapGetter<Function<String, String>> HEADERS =
      new TextMapGetter<>() {
        @Override
        public String get(Function<String, String> carrier, String key) {
          return carrier == null ? null : carrier.apply(key);
        }
      };
}
