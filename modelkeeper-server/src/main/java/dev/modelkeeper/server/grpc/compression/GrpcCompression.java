package dev.modelkeeper.server.grpc.compression;

import io.grpc.Codec;
import io.grpc.CompressorRegistry;
import io.grpc.DecompressorRegistry;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Set;
import java.util.zip.DeflaterOutputStream;
import java.util.zip.InflaterInputStream;

/**
 * The message encodings the gRPC endpoint speaks: identity, gzip and deflate (zlib), as grpc-java
 * and grpc's C core name them. A compressed message is inflated as it is parsed, through grpc's
 * size check: once it passes the message size limit (the server's {@code max-request-bytes}) its
 * call is refused RESOURCE_EXHAUSTED, so a small message that would inflate to gigabytes costs at
 * most that limit. Thread-safe.
 */
public final class GrpcCompression {

  /** The message encodings after identity. */
  public static final Set<String> ENCODINGS = Set.of("gzip", "deflate");

  /** Inflates identity, gzip and deflate messages. */
  public static final DecompressorRegistry DECOMPRESSORS =
      DecompressorRegistry.emptyInstance()
          .with(Codec.Identity.NONE, false)
          .with(new Codec.Gzip(), true)
          .with(Deflate.INSTANCE, true);

  /** Compresses answers in gzip or deflate for {@link #ANSWER_IN_KIND}. */
  public static final CompressorRegistry COMPRESSORS = compressors();

  private static final Metadata.Key<String> ENCODING =
      Metadata.Key.of("grpc-encoding", Metadata.ASCII_STRING_MARSHALLER);

  /**
   * Compresses a call's answers as its request was compressed (when the client accepts that
   * encoding, as grpc checks); uncompressed requests get uncompressed answers.
   */
  public static final ServerInterceptor ANSWER_IN_KIND =
      new ServerInterceptor() {
        @Override
        public <Q, A> ServerCall.Listener<Q> interceptCall(
            ServerCall<Q, A> call, Metadata headers, ServerCallHandler<Q, A> next) {
          String encoding = headers.get(ENCODING);
          if (encoding != null && ENCODINGS.contains(encoding)) {
            call.setCompression(encoding);
          }
          return next.startCall(call, headers);
        }
      };

  private GrpcCompression() {}

  private static CompressorRegistry compressors() {
    CompressorRegistry r = CompressorRegistry.newEmptyInstance();
    r.register(Codec.Identity.NONE);
    r.register(new Codec.Gzip());
    r.register(Deflate.INSTANCE);
    return r;
  }

  /** grpc's {@code deflate}: a zlib stream (RFC 1950). */
  private enum Deflate implements Codec {
    INSTANCE;

    @Override
    public String getMessageEncoding() {
      return "deflate";
    }

    @Override
    public OutputStream compress(OutputStream os) {
      return new DeflaterOutputStream(os);
    }

    @Override
    public InputStream decompress(InputStream is) {
      return new InflaterInputStream(is);
    }
  }
}
