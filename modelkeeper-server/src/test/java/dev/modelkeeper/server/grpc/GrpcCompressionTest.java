package dev.modelkeeper.server.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.google.protobuf.ByteString;
import dev.modelkeeper.server.ModelKeeperServer;
import dev.modelkeeper.server.grpc.GRPCInferenceServiceGrpc.GRPCInferenceServiceBlockingStub;
import dev.modelkeeper.server.support.TestServer;
import io.grpc.Codec;
import io.grpc.CompressorRegistry;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.zip.DeflaterOutputStream;
import java.util.zip.GZIPOutputStream;
import java.util.zip.InflaterInputStream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Compressed gRPC messages with grpc-java's own client: gzip and deflate requests answered, and a
 * message that inflates far past the size limit refused RESOURCE_EXHAUSTED without the server
 * holding it.
 */
class GrpcCompressionTest {

  private static final int LIMIT = 1 << 20;

  private static ModelKeeperServer server;

  @BeforeAll
  static void start() {
    server =
        TestServer.demo(
            b ->
                b.network(n -> n.withGrpcPort(0))
                    .budgets(m -> m.withMaxRequestBytes(LIMIT).withMaxModels(4)));
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  private static ManagedChannel channel(CompressorRegistry compressors) {
    return NettyChannelBuilder.forAddress("127.0.0.1", server.grpcPort())
        .usePlaintext()
        .compressorRegistry(compressors)
        .build();
  }

  @ParameterizedTest
  @ValueSource(strings = {"gzip", "deflate"})
  void compressedRequests_areAnswered(String encoding) throws Exception {
    CompressorRegistry compressors = CompressorRegistry.newEmptyInstance();
    compressors.register(new Codec.Gzip());
    compressors.register(new ZlibForTest());
    ManagedChannel ch = channel(compressors);
    try {
      GRPCInferenceServiceBlockingStub stub =
          GRPCInferenceServiceGrpc.newBlockingStub(ch)
              .withCompression(encoding)
              .withDeadlineAfter(60, TimeUnit.SECONDS);
      // 1,000 rows: a message worth compressing
      ByteBuffer b = ByteBuffer.allocate(1_000 * 16).order(ByteOrder.LITTLE_ENDIAN);
      for (int i = 0; i < 1_000; i++) {
        b.putFloat(5.1f).putFloat(3.5f).putFloat(1.4f).putFloat(0.2f);
      }
      ModelInferResponse r =
          stub.modelInfer(GrpcEndpointTest.iris(1_000, ByteString.copyFrom(b.array())).build());
      assertThat(r.getOutputs(0).getShapeList()).containsExactly(1_000L, 3L);
    } finally {
      ch.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
    }
  }

  @ParameterizedTest
  @ValueSource(ints = {256 << 20})
  void aMessageInflatingPastTheLimit_isResourceExhausted_andLeavesNothingHeld(int inflated)
      throws Exception {
    byte[] bomb = gzipBomb(inflated);
    assertThat(bomb.length).isLessThan(LIMIT); // small on the wire, 256x the limit inflated
    CompressorRegistry compressors = CompressorRegistry.newEmptyInstance();
    compressors.register(new Prepared(bomb));
    ManagedChannel ch = channel(compressors);
    try {
      GRPCInferenceServiceBlockingStub stub =
          GRPCInferenceServiceGrpc.newBlockingStub(ch)
              .withCompression("gzip")
              .withDeadlineAfter(60, TimeUnit.SECONDS);
      StatusRuntimeException e =
          catchThrowableOfType(
              StatusRuntimeException.class,
              () -> stub.modelInfer(ModelInferRequest.newBuilder().setModelName("iris").build()));
      assertThat(e).isNotNull();
      assertThat(e.getStatus().getCode())
          .as(e.getStatus().toString())
          .isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
      assertThat(e.getStatus().getDescription()).contains("max-request-bytes");
      assertThat(
              GRPCInferenceServiceGrpc.newBlockingStub(ch)
                  .serverLive(ServerLiveRequest.getDefaultInstance())
                  .getLive())
          .isTrue();
      Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> server.inflightBytes() == 0);
    } finally {
      ch.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
    }
  }

  /**
   * A gzip stream of a ModelInferRequest whose raw_input_contents field claims {@code inflated}
   * bytes, all zeros: a few hundred kB that inflate to {@code inflated}.
   */
  private static byte[] gzipBomb(int inflated) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (GZIPOutputStream gz = new GZIPOutputStream(out, 1 << 16)) {
      gz.write(0x3A); // field 7 (raw_input_contents), length-delimited
      for (int v = inflated; ; v >>>= 7) { // its length as a varint
        if ((v & ~0x7F) == 0) {
          gz.write(v);
          break;
        }
        gz.write((v & 0x7F) | 0x80);
      }
      byte[] zeros = new byte[1 << 16];
      for (int left = inflated; left > 0; left -= zeros.length) {
        gz.write(zeros, 0, Math.min(left, zeros.length));
      }
    }
    return out.toByteArray();
  }

  /** A "gzip" compressor that sends prepared bytes whatever the message. */
  private static final class Prepared implements Codec {
    private final byte[] bytes;

    Prepared(byte[] bytes) {
      this.bytes = bytes;
    }

    @Override
    public String getMessageEncoding() {
      return "gzip";
    }

    @Override
    public OutputStream compress(OutputStream os) {
      return new OutputStream() {
        @Override
        public void write(int b) {}

        @Override
        public void write(byte[] b, int off, int len) {}

        @Override
        public void close() throws IOException {
          os.write(bytes);
          os.close();
        }
      };
    }

    @Override
    public InputStream decompress(InputStream is) {
      throw new UncheckedIOException(new IOException("not used"));
    }
  }

  /** grpc's deflate (zlib), which grpc-java's client does not ship. */
  private static final class ZlibForTest implements Codec {
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
