package dev.modelkeeper.server.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import dev.modelkeeper.server.ModelKeeperServer;
import dev.modelkeeper.server.grpc.GRPCInferenceServiceGrpc.GRPCInferenceServiceBlockingStub;
import dev.modelkeeper.server.support.RawHttp2;
import dev.modelkeeper.server.support.TestServer;
import dev.modelkeeper.testkit.Http;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * gRPC request messages while they arrive, from clients that stop halfway (frame by frame over
 * loopback) beside a real gRPC client: their bytes count against the in-flight budget, calls whose
 * message does not arrive in time end, answers not read hold their budget, connections that never
 * speak are closed and connections past the limit wait to be accepted.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class GrpcArrivalsTest {

  private static final String INFER = "/inference.GRPCInferenceService/ModelInfer";
  private static final Duration READ = Duration.ofSeconds(20);

  @Test
  void messageThatStopsArriving_countsInTheBudget_andEndsAtTheBodyReadTimeout() throws Exception {
    try (ModelKeeperServer server =
            TestServer.demo(
                b ->
                    b.network(n -> n.withGrpcPort(0))
                        .timeouts(t -> t.withBodyRead(Duration.ofMillis(500))));
        RawHttp2 raw = RawHttp2.connect(server.grpcPort(), READ)) {
      long start = System.nanoTime();
      int call = raw.openCall(INFER);
      raw.sendPartialMessage(call, 200_000, 48_000);
      await().atMost(Duration.ofSeconds(5)).until(() -> server.inflightBytes() == 48_000);
      assertThat(raw.awaitEnd(call)).isTrue();
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThan(Duration.ofMillis(500));
      await().atMost(Duration.ofSeconds(5)).until(() -> server.inflightBytes() == 0);
      assertThat(Http.to(server.port()).get("/metrics").body())
          .contains("modelkeeper_slow_client_disconnects_total 1.0");
      assertLive(server);
    }
  }

  @Test
  void callThatSendsOnlyItsHeaders_endsAtTheBodyReadTimeout() throws Exception {
    try (ModelKeeperServer server =
            TestServer.demo(
                b ->
                    b.network(n -> n.withGrpcPort(0))
                        .timeouts(t -> t.withBodyRead(Duration.ofMillis(500))));
        RawHttp2 raw = RawHttp2.connect(server.grpcPort(), READ)) {
      int call = raw.openCall(INFER);
      assertThat(raw.awaitEnd(call)).isTrue();
      assertThat(Http.to(server.port()).get("/metrics").body())
          .contains("modelkeeper_slow_client_disconnects_total 1.0");
      assertLive(server);
    }
  }

  @Test
  void messageThatDoesNotFitBesideOneArriving_isUnavailable_andFitsOnceThatOneIsGone()
      throws Exception {
    try (ModelKeeperServer server =
        TestServer.demo(
            b ->
                b.network(n -> n.withGrpcPort(0))
                    .budgets(m -> m.withMaxRequestBytes(200_000).withMaxInflightBytes(200_000))
                    .timeouts(t -> t.withBodyRead(Duration.ofSeconds(30))))) {
      ManagedChannel channel =
          NettyChannelBuilder.forAddress("127.0.0.1", server.grpcPort()).usePlaintext().build();
      try {
        GRPCInferenceServiceBlockingStub grpc =
            GRPCInferenceServiceGrpc.newBlockingStub(channel)
                .withDeadlineAfter(30, TimeUnit.SECONDS);
        // 3,125 rows of iris: a 50 kB message, 100 kB with its decoded tensors
        ModelInferRequest rows = irisRows(3_125);
        try (RawHttp2 raw = RawHttp2.connect(server.grpcPort(), READ)) {
          raw.sendPartialMessage(raw.openCall(INFER), 190_000, 160_000);
          await().atMost(Duration.ofSeconds(5)).until(() -> server.inflightBytes() == 160_000);
          StatusRuntimeException refused = null;
          try {
            grpc.modelInfer(rows);
          } catch (StatusRuntimeException e) {
            refused = e;
          }
          assertThat(refused).isNotNull();
          assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
          assertThat(refused.getStatus().getDescription()).contains("in-flight request budget");
        }
        // the stalled call's bytes return when its connection closes
        await().atMost(Duration.ofSeconds(5)).until(() -> server.inflightBytes() == 0);
        assertThat(grpc.modelInfer(rows).getRawOutputContentsCount()).isEqualTo(2);
        await().atMost(Duration.ofSeconds(5)).until(() -> server.inflightBytes() == 0);
      } finally {
        channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
      }
    }
  }

  @Test
  void answerThatTheClientDoesNotRead_holdsItsRequestsBudget_untilTheClientIsGone()
      throws Exception {
    try (ModelKeeperServer server = TestServer.demo(b -> b.network(n -> n.withGrpcPort(0)))) {
      byte[] message = irisRows(1).toByteArray();
      try (RawHttp2 raw = RawHttp2.connect(server.grpcPort(), READ, 0)) {
        int call = raw.openCall(INFER);
        raw.sendMessage(call, message);
        // the answer's headers are out, its message cannot leave: the request's bytes stay counted
        assertThat(raw.awaitHeaders(call)).isTrue();
        assertThat(server.inflightBytes()).isEqualTo(2L * message.length);
      }
      await().atMost(Duration.ofSeconds(5)).until(() -> server.inflightBytes() == 0);
    }
  }

  @Test
  void connectionPastTheLimit_waitsToBeAccepted_untilAnotherCloses() throws Exception {
    try (ModelKeeperServer server =
        TestServer.demo(b -> b.network(n -> n.withGrpcPort(0).withMaxConnections(2)))) {
      RawHttp2 first = RawHttp2.connect(server.grpcPort(), READ);
      try (RawHttp2 second = RawHttp2.connect(server.grpcPort(), READ);
          Socket third = new Socket("127.0.0.1", server.grpcPort())) {
        // an accepted connection hears the server's settings at once; this one waits
        third.setSoTimeout(1_000);
        assertThatThrownBy(() -> third.getInputStream().read())
            .isInstanceOf(SocketTimeoutException.class);
        first.close();
        third.setSoTimeout((int) READ.toMillis());
        assertThat(third.getInputStream().read()).isNotNegative();
      }
    }
  }

  @Test
  void connectionThatNeverSendsItsPreface_isClosedAtTheBodyReadTimeout() throws Exception {
    try (ModelKeeperServer server =
            TestServer.demo(
                b ->
                    b.network(n -> n.withGrpcPort(0))
                        .timeouts(t -> t.withBodyRead(Duration.ofMillis(500))));
        Socket silent = new Socket("127.0.0.1", server.grpcPort())) {
      silent.setSoTimeout((int) READ.toMillis());
      long start = System.nanoTime();
      byte[] sink = new byte[4096];
      while (silent.getInputStream().read(sink) >= 0) {
        // the server's settings, then its GOAWAY
      }
      assertThat(Duration.ofNanos(System.nanoTime() - start))
          .isGreaterThan(Duration.ofMillis(400))
          .isLessThan(READ);
      assertLive(server);
    }
  }

  private static ModelInferRequest irisRows(int rows) {
    return GrpcEndpointTest.iris(rows, ByteString.copyFrom(new byte[rows * 16])).build();
  }

  private static void assertLive(ModelKeeperServer server) throws InterruptedException {
    ManagedChannel channel =
        NettyChannelBuilder.forAddress("127.0.0.1", server.grpcPort()).usePlaintext().build();
    try {
      assertThat(
              GRPCInferenceServiceGrpc.newBlockingStub(channel)
                  .withDeadlineAfter(30, TimeUnit.SECONDS)
                  .serverLive(ServerLiveRequest.getDefaultInstance())
                  .getLive())
          .isTrue();
    } finally {
      channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
    }
  }
}
