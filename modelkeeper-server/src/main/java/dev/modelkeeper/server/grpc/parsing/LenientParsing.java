package dev.modelkeeper.server.grpc.parsing;

import dev.modelkeeper.server.admission.DirectBuffers;
import dev.modelkeeper.server.grpc.GRPCInferenceServiceGrpc;
import dev.modelkeeper.server.grpc.ModelInferRequest;
import dev.modelkeeper.server.grpc.OffHeapInferRequests;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerMethodDefinition;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.InputStream;

/**
 * How the gRPC service reads its requests: large inference requests off-heap, and a message that is
 * not valid protobuf answered INVALID_ARGUMENT (or RESOURCE_EXHAUSTED when it inflates past the
 * size limit) in one status, not a logged stack trace. Stateless.
 */
public final class LenientParsing {

  private LenientParsing() {}

  /**
   * {@code service} whose request messages are parsed without throwing: one that is not valid
   * protobuf arrives as null, which {@link #INVALID_MESSAGES} answers INVALID_ARGUMENT. A parser
   * that throws would have grpc answer UNKNOWN and log the failure's stack trace at ERROR, a few kB
   * of log per call any client could send.
   */
  public static ServerServiceDefinition of(ServerServiceDefinition service, DirectBuffers offHeap) {
    ServerServiceDefinition.Builder b =
        ServerServiceDefinition.builder(service.getServiceDescriptor().getName());
    for (ServerMethodDefinition<?, ?> m : service.getMethods()) {
      b.addMethod(lenient(m, offHeap));
    }
    return b.build();
  }

  @SuppressWarnings("unchecked") // the ModelInfer method's requests are ModelInferRequests
  private static <Q, A> ServerMethodDefinition<Q, A> lenient(
      ServerMethodDefinition<Q, A> m, DirectBuffers offHeap) {
    MethodDescriptor<Q, A> method = m.getMethodDescriptor();
    MethodDescriptor.Marshaller<Q> requests = method.getRequestMarshaller();
    // not ModelStreamInfer's: an off-heap buffer is held until its call ends, and a stream's
    // messages would hold theirs for as long as the stream lasts
    if (method
        .getFullMethodName()
        .equals(GRPCInferenceServiceGrpc.getModelInferMethod().getFullMethodName())) {
      // large inference requests are parsed off-heap, their raw contents read in place
      requests =
          (MethodDescriptor.Marshaller<Q>)
              new OffHeapInferRequests(
                  (MethodDescriptor.Marshaller<ModelInferRequest>) requests, offHeap);
    }
    return ServerMethodDefinition.create(
        method.toBuilder(new LenientMarshaller<>(requests), method.getResponseMarshaller()).build(),
        m.getServerCallHandler());
  }

  /** A request marshaller whose parse returns null where {@code strict}'s throws. */
  private static final class LenientMarshaller<Q> implements MethodDescriptor.Marshaller<Q> {
    private final MethodDescriptor.Marshaller<Q> strict;

    /** The message's type, for the error: e.g. ModelInferRequest. */
    final String type;

    LenientMarshaller(MethodDescriptor.Marshaller<Q> strict) {
      this.strict = strict;
      this.type =
          strict instanceof MethodDescriptor.ReflectableMarshaller<?> r
              ? r.getMessageClass().getSimpleName()
              : "request";
    }

    @Override
    public InputStream stream(Q value) {
      return strict.stream(value);
    }

    @Override
    public Q parse(InputStream stream) {
      try {
        return strict.parse(stream);
      } catch (RuntimeException e) { // grpc's protobuf marshaller throws StatusRuntimeException
        for (Throwable t = e; t != null; t = t.getCause()) {
          if (t instanceof StatusRuntimeException s
              && s.getStatus().getCode() == Status.Code.RESOURCE_EXHAUSTED) {
            TOO_LARGE.set(Boolean.TRUE); // a compressed message inflating past the size limit
          }
        }
        return null;
      }
    }
  }

  /**
   * Set by {@link LenientMarshaller#parse} when a message was refused for its inflated size; read
   * by {@link #INVALID_MESSAGES} on the same thread, which grpc parses and delivers a message on.
   */
  private static final ThreadLocal<Boolean> TOO_LARGE = new ThreadLocal<>();

  /** Answers a request that {@link #of} could not parse (null) INVALID_ARGUMENT. */
  public static final ServerInterceptor INVALID_MESSAGES =
      new ServerInterceptor() {
        @Override
        public <Q, A> ServerCall.Listener<Q> interceptCall(
            ServerCall<Q, A> call, Metadata headers, ServerCallHandler<Q, A> next) {
          return new ForwardingServerCallListener.SimpleForwardingServerCallListener<Q>(
              next.startCall(call, headers)) {
            private boolean refused;

            @Override
            public void onMessage(Q message) {
              if (message != null) {
                super.onMessage(message);
              } else if (!refused) {
                refused = true;
                String type =
                    call.getMethodDescriptor().getRequestMarshaller()
                            instanceof LenientMarshaller<?> l
                        ? l.type
                        : "request";
                boolean tooLarge = TOO_LARGE.get() != null;
                TOO_LARGE.remove();
                call.close(
                    tooLarge
                        ? Status.RESOURCE_EXHAUSTED.withDescription(
                            "the compressed "
                                + type
                                + " inflates past the request size limit (max-request-bytes)")
                        : Status.INVALID_ARGUMENT.withDescription(
                            "the message is not a valid " + type + " (protobuf)"),
                    new Metadata());
              }
            }

            @Override
            public void onHalfClose() {
              if (!refused) { // the call is answered already
                super.onHalfClose();
              }
            }
          };
        }
      };
}
