package dev.modelkeeper.server.grpc.sharedmemory;

import dev.modelkeeper.server.errors.BadRequestException;
import dev.modelkeeper.server.grpc.InferParameter;
import dev.modelkeeper.server.grpc.ModelInferRequest;
import dev.modelkeeper.server.grpc.SystemSharedMemoryRegisterRequest;
import dev.modelkeeper.server.grpc.SystemSharedMemoryStatusResponse;
import dev.modelkeeper.server.request.SharedMemoryRef;
import dev.modelkeeper.server.request.TensorInputs;
import dev.modelkeeper.server.sharedmemory.SharedMemoryRegions;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Map;

/**
 * Maps the gRPC shared memory messages onto {@link SharedMemoryRegions}. Thread-safe.
 *
 * <p>The client's address reaches the register method through {@link #PEER}, an interceptor that
 * puts it in the call's context; read it with {@link #peer()} on the call's own thread.
 */
public final class GrpcSharedMemory {

  private static final Context.Key<SocketAddress> REMOTE = Context.key("remote-address");

  private static final Metadata.Key<String> FORWARDED_FOR =
      Metadata.Key.of("x-forwarded-for", Metadata.ASCII_STRING_MARSHALLER);

  private static final Metadata.Key<String> FORWARDED =
      Metadata.Key.of("forwarded", Metadata.ASCII_STRING_MARSHALLER);

  /**
   * Puts each call's remote address in its context; none (unknown) for a call a proxy forwarded,
   * whose client is elsewhere whatever the connection's address.
   */
  public static final ServerInterceptor PEER =
      new ServerInterceptor() {
        @Override
        public <Q, A> ServerCall.Listener<Q> interceptCall(
            ServerCall<Q, A> call, Metadata headers, ServerCallHandler<Q, A> next) {
          SocketAddress remote =
              headers.containsKey(FORWARDED_FOR) || headers.containsKey(FORWARDED)
                  ? null
                  : call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
          return Contexts.interceptCall(
              Context.current().withValue(REMOTE, remote), call, headers, next);
        }
      };

  private final SharedMemoryRegions regions;

  public GrpcSharedMemory(SharedMemoryRegions regions) {
    this.regions = regions;
  }

  /** The regions behind this mapping. */
  public SharedMemoryRegions regions() {
    return regions;
  }

  /** The address of the current call's client, or null when unknown. */
  public static InetAddress peer() {
    return REMOTE.get() instanceof InetSocketAddress a ? a.getAddress() : null;
  }

  /** Registers the region {@code r} asks for, for a client at {@code peer}. */
  public void register(SystemSharedMemoryRegisterRequest r, InetAddress peer) {
    if (r.getOffset() < 0 || r.getByteSize() < 0) { // uint64 past Long.MAX_VALUE
      throw new BadRequestException("offset and byte_size must be below 2^63");
    }
    regions.register(r.getName(), r.getKey(), r.getOffset(), r.getByteSize(), peer);
  }

  /** Unregisters region {@code name}, or every region when it is empty. */
  public void unregister(String name) {
    if (name.isEmpty()) {
      regions.unregisterAll();
    } else {
      regions.unregister(name);
    }
  }

  /** The status of region {@code name}, or of every region when it is empty. */
  public SystemSharedMemoryStatusResponse status(String name) {
    SystemSharedMemoryStatusResponse.Builder b = SystemSharedMemoryStatusResponse.newBuilder();
    for (SharedMemoryRegions.Status s : regions.status(name)) {
      b.putRegions(
          s.name(),
          SystemSharedMemoryStatusResponse.RegionStatus.newBuilder()
              .setName(s.name())
              .setKey(s.key())
              .setOffset(s.offset())
              .setByteSize(s.byteSize())
              .build());
    }
    return b.build();
  }

  /**
   * Where a tensor with {@code params} lies in shared memory, or null when it names no region.
   *
   * @throws BadRequestException when a parameter has the wrong type or value
   */
  public static SharedMemoryRef ref(Map<String, InferParameter> params, String where) {
    InferParameter region = params.get(SharedMemoryRef.REGION);
    InferParameter offset = params.get(SharedMemoryRef.OFFSET);
    InferParameter size = params.get(SharedMemoryRef.BYTE_SIZE);
    if (region == null && offset == null && size == null) {
      return null;
    }
    if (region != null
        && region.getParameterChoiceCase() != InferParameter.ParameterChoiceCase.STRING_PARAM) {
      throw new BadRequestException(
          where + " '" + SharedMemoryRef.REGION + "' must be a region name (string_param)");
    }
    return SharedMemoryRef.of(
        where,
        region == null ? null : region.getStringParam(),
        whole(offset, SharedMemoryRef.OFFSET, where),
        whole(size, SharedMemoryRef.BYTE_SIZE, where));
  }

  private static Long whole(InferParameter p, String key, String where) {
    if (p == null) {
      return null;
    }
    switch (p.getParameterChoiceCase()) {
      case INT64_PARAM:
        return p.getInt64Param();
      case UINT64_PARAM:
        return p.getUint64Param(); // past 2^63 it reads negative and is refused
      default:
        throw new BadRequestException(where + " '" + key + "' must be an integer (int64_param)");
    }
  }

  /**
   * The bytes the inputs of {@code in} take once copied out of shared memory, to count before they
   * are: their sizes, and for BYTES a string per 4 bytes at most.
   */
  public static long inputBytes(ModelInferRequest in) {
    long n = 0;
    for (ModelInferRequest.InferInputTensor t : in.getInputsList()) {
      InferParameter size = t.getParametersMap().get(SharedMemoryRef.BYTE_SIZE);
      if (size != null) {
        long b = Math.max(0, Math.max(size.getInt64Param(), size.getUint64Param()));
        n += t.getDatatype().equals("BYTES") ? b + b / 4 * TensorInputs.STRING_OVERHEAD_BYTES : b;
      }
    }
    return n;
  }
}
