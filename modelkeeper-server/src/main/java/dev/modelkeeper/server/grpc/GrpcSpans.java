package dev.modelkeeper.server.grpc;

import dev.modelkeeper.server.request.RequestTrace;
import dev.modelkeeper.server.request.RequestTracer;
import io.grpc.Context;
import io.grpc.Metadata;
import io.grpc.ServerStreamTracer;
import io.grpc.Status;
import java.util.Map;

/**
 * One trace per gRPC call, continuing the caller's {@code traceparent} metadata, named by the full
 * method name and ended when the call's stream closes, with its status code. The handler finds the
 * trace with {@link #current()}. Installed only when tracing is on. Thread-safe.
 */
public final class GrpcSpans extends ServerStreamTracer.Factory {

  private static final Context.Key<RequestTrace> TRACE = Context.key("modelkeeper.trace");

  private final RequestTracer tracer;

  public GrpcSpans(RequestTracer tracer) {
    this.tracer = tracer;
  }

  /** The trace of the call whose handler runs on this thread, {@link RequestTrace#NONE} if none. */
  static RequestTrace current() {
    RequestTrace trace = TRACE.get();
    return trace != null ? trace : RequestTrace.NONE;
  }

  @Override
  public ServerStreamTracer newServerStreamTracer(String fullMethodName, Metadata headers) {
    RequestTrace trace =
        tracer.start(
            fullMethodName,
            name -> headers.get(Metadata.Key.of(name, Metadata.ASCII_STRING_MARSHALLER)),
            Map.of("rpc.system", "grpc", "rpc.method", fullMethodName));
    return new ServerStreamTracer() {
      @Override
      public Context filterContext(Context context) {
        return context.withValue(TRACE, trace);
      }

      @Override
      public void streamClosed(Status status) {
        trace.attribute("rpc.grpc.status_code", status.getCode().value());
        trace.end(
            !status.isOk(),
            status.getCode()
                + (status.getDescription() != null ? ": " + status.getDescription() : ""));
      }
    };
  }
}
