package dev.modelkeeper.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import dev.modelkeeper.server.grpc.GRPCInferenceServiceGrpc;
import dev.modelkeeper.server.grpc.ModelInferRequest;
import dev.modelkeeper.server.grpc.ModelInferResponse;
import dev.modelkeeper.server.support.RawHttp2;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Clients that leave in the middle of a request or of its answer, over loopback, one of each kind:
 * each sends an iris inference of {@value #ROWS} rows (about 5 MB in, 11 MB of JSON out) and goes
 * away at a chosen point. Each call returns once the client has left.
 */
final class Disconnects {

  static final int ROWS = 300_000;

  private static final Duration TIMEOUT = Duration.ofSeconds(20);

  private Disconnects() {}

  /** The iris input of {@value #ROWS} rows, FP32 little-endian. */
  private static byte[] irisRows() {
    ByteBuffer b = ByteBuffer.allocate(ROWS * 16).order(ByteOrder.LITTLE_ENDIAN);
    for (int i = 0; i < ROWS; i++) {
      b.putFloat(5.1f).putFloat(3.5f).putFloat(1.4f).putFloat(0.2f);
    }
    return b.array();
  }

  /**
   * REST: sends the whole request, reads the first bytes of the answer (a 200 under way) and resets
   * the connection while the rest is being written.
   */
  static void restMidResponse(int port) throws IOException {
    byte[] data = irisRows();
    byte[] header =
        ("{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":["
                + ROWS
                + ",4],\"parameters\":{\"binary_data_size\":"
                + data.length
                + "}}]}")
            .getBytes(StandardCharsets.UTF_8);
    try (Socket s = new Socket("127.0.0.1", port)) {
      s.setSoTimeout((int) TIMEOUT.toMillis());
      OutputStream out = s.getOutputStream();
      out.write(
          ("POST /v2/models/iris/infer HTTP/1.1\r\nHost: localhost\r\n"
                  + "Content-Type: application/octet-stream\r\n"
                  + "Inference-Header-Content-Length: "
                  + header.length
                  + "\r\nContent-Length: "
                  + (header.length + data.length)
                  + "\r\n\r\n")
              .getBytes(StandardCharsets.US_ASCII));
      out.write(header);
      out.write(data);
      out.flush();
      byte[] start = s.getInputStream().readNBytes(12);
      assertThat(new String(start, StandardCharsets.US_ASCII)).isEqualTo("HTTP/1.1 200");
      s.setSoLinger(true, 0); // close with a reset: the rest of the answer cannot be delivered
    }
  }

  /** REST: announces a 1 MB body, sends 1,000 bytes of it and closes the connection. */
  static void restMidRequest(int port) throws IOException {
    try (Socket s = new Socket("127.0.0.1", port)) {
      OutputStream out = s.getOutputStream();
      out.write(
          ("POST /v2/models/iris/infer HTTP/1.1\r\nHost: localhost\r\n"
                  + "Content-Type: application/json\r\nContent-Length: 1000000\r\n\r\n")
              .getBytes(StandardCharsets.US_ASCII));
      out.write(new byte[1000]);
      out.flush();
    }
  }

  /**
   * gRPC: opens a ModelInfer call, sends 1,000 bytes of a 1 MB message and closes the connection.
   */
  static void grpcMidRequest(int port) throws IOException {
    try (RawHttp2 h2 = RawHttp2.connect(port, TIMEOUT)) {
      int call = h2.openCall("/inference.GRPCInferenceService/ModelInfer");
      h2.sendPartialMessage(call, 1_000_000, 1000);
    }
  }

  /**
   * gRPC: sends the whole request and cancels the call once the answer's headers arrived, while its
   * message (larger than the client's flow-control window) is still being written.
   */
  static void grpcMidResponse(int port) throws Exception {
    ManagedChannel channel =
        NettyChannelBuilder.forAddress("127.0.0.1", port)
            .usePlaintext()
            .maxInboundMessageSize(64 << 20)
            .build();
    try {
      ClientCall<ModelInferRequest, ModelInferResponse> call =
          channel.newCall(
              GRPCInferenceServiceGrpc.getModelInferMethod(),
              CallOptions.DEFAULT.withDeadlineAfter(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS));
      CompletableFuture<Status> closed = new CompletableFuture<>();
      call.start(
          new ClientCall.Listener<>() {
            @Override
            public void onHeaders(Metadata headers) {
              call.cancel("the client leaves mid-response", null);
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
              closed.complete(status);
            }
          },
          new Metadata());
      call.sendMessage(
          ModelInferRequest.newBuilder()
              .setModelName("iris")
              .addInputs(
                  ModelInferRequest.InferInputTensor.newBuilder()
                      .setName("input")
                      .setDatatype("FP32")
                      .addShape(ROWS)
                      .addShape(4))
              .addRawInputContents(ByteString.copyFrom(irisRows()))
              .build());
      call.halfClose();
      Status status = closed.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      assertThat(status.getCode()).isEqualTo(Status.Code.CANCELLED);
    } finally {
      channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
    }
  }
}
