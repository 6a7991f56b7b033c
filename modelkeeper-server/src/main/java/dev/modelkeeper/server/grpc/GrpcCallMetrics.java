package dev.modelkeeper.server.grpc;

import dev.modelkeeper.server.observability.ServerMetrics;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServerStreamTracer;
import io.grpc.Status;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Counts and times every gRPC call by method and status code, as REST requests are counted by route
 * and status: calls ended by the transport (a message over the size limit, a passed deadline, a
 * cancellation, a refused call) included, since a stream tracer sees each stream close. Methods the
 * service does not have are counted as {@code unknown}, so that clients cannot grow the set of
 * series. Thread-safe.
 */
public final class GrpcCallMetrics extends ServerStreamTracer.Factory {

  static final String UNKNOWN = "unknown";

  private final ServerMetrics metrics;

  /** The service's full method names to their bare names, e.g. ".../ModelInfer" to ModelInfer. */
  private final Map<String, String> bareNames;

  public GrpcCallMetrics(ServerMetrics metrics, ServerServiceDefinition service) {
    this.metrics = metrics;
    this.bareNames =
        service.getMethods().stream()
            .map(m -> m.getMethodDescriptor().getFullMethodName())
            .collect(
                Collectors.toUnmodifiableMap(
                    full -> full, full -> MethodDescriptor.extractBareMethodName(full)));
  }

  @Override
  public ServerStreamTracer newServerStreamTracer(String fullMethodName, Metadata headers) {
    String method = bareNames.getOrDefault(fullMethodName, UNKNOWN);
    long started = System.nanoTime();
    return new ServerStreamTracer() {
      @Override
      public void streamClosed(Status status) { // once per stream
        metrics.grpcCall(
            method, status.getCode().value(), status.getCode().name(), System.nanoTime() - started);
      }
    };
  }
}
