package dev.modelkeeper.server.grpc;

import dev.modelkeeper.server.engine.RequestSpan;
import dev.modelkeeper.server.engine.Tracing;
import io.grpc.Context;
import io.grpc.Metadata;
import io.grpc.ServerStreamTracer;
import io.grpc.Status;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;

/**
 * One server span per gRPC call, continuing the caller's {@code traceparent} metadata, named by the
 * full method name and ended when the call's stream closes, with its status code. The handler finds
 * the span with {@link #current()}. Installed only when tracing is on. Thread-safe.
 */
public final class GrpcSpans extends ServerStreamTracer.Factory {

  private static final Context.Key<RequestSpan> SPAN = Context.key("modelkeeper.span");
  private static final AttributeKey<String> SYSTEM = AttributeKey.stringKey("rpc.system");
  private static final AttributeKey<String> METHOD = AttributeKey.stringKey("rpc.method");
  private static final AttributeKey<Long> CODE = AttributeKey.longKey("rpc.grpc.status_code");

  private final Tracing tracing;

  public GrpcSpans(Tracing tracing) {
    this.tracing = tracing;
  }

  /** The span of the call whose handler runs on this thread, {@link RequestSpan#NONE} if none. */
  static RequestSpan current() {
    RequestSpan span = SPAN.get();
    return span != null ? span : RequestSpan.NONE;
  }

  @Override
  public ServerStreamTracer newServerStreamTracer(String fullMethodName, Metadata headers) {
    RequestSpan span =
        tracing.serverSpan(
            fullMethodName,
            name -> headers.get(Metadata.Key.of(name, Metadata.ASCII_STRING_MARSHALLER)),
            Attributes.of(SYSTEM, "grpc", METHOD, fullMethodName));
    return new ServerStreamTracer() {
      @Override
      public Context filterContext(Context context) {
        return context.withValue(SPAN, span);
      }

      @Override
      public void streamClosed(Status status) {
        span.set(CODE, (long) status.getCode().value());
        span.end(
            !status.isOk(),
            status.getCode()
                + (status.getDescription() != null ? ": " + status.getDescription() : ""));
      }
    };
  }
}
