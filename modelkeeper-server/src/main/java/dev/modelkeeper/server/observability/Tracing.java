package dev.modelkeeper.server.observability;

import dev.modelkeeper.server.engine.ServerVersion;
import dev.modelkeeper.server.request.RequestTrace;
import dev.modelkeeper.server.request.RequestTracer;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.common.AttributesBuilder;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapPropagator;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * Requests' traces as OpenTelemetry spans: one server span per request, continuing the caller's W3C
 * {@code traceparent}, to which the engine's steps are added as child spans ({@link RequestSpan}).
 * Without it the server uses {@link RequestTracer#OFF}. Thread-safe.
 */
public final class Tracing implements RequestTracer {

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

  @Override
  public boolean on() {
    return true;
  }

  @Override
  public RequestTrace start(
      String name, Function<String, String> header, Map<String, String> attributes) {
    Context parent = propagator.extract(Context.root(), header, HEADERS);
    AttributesBuilder a = Attributes.builder();
    attributes.forEach(a::put);
    Span span =
        tracer
            .spanBuilder(name)
            .setParent(parent)
            .setSpanKind(SpanKind.SERVER)
            .setAllAttributes(a.build())
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
