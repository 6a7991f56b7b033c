package dev.modelkeeper.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.modelkeeper.server.config.InvalidConfigException;
import dev.modelkeeper.server.config.Network;
import dev.modelkeeper.server.config.ServerConfig;
import dev.modelkeeper.server.support.TestServer;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** {@code --metrics-port}: its own port, off with -1, and a port it cannot have named at start. */
class MetricsPortTest {

  @Test
  void metricsPort_off_servesNone() {
    try (ModelKeeperServer server = TestServer.demo(b -> b)) {
      assertThat(server.metricsPort()).isEqualTo(ServerConfig.METRICS_OFF);
    }
  }

  @Test
  void metricsPort_answersOnlyMetrics() throws Exception {
    try (ModelKeeperServer server = TestServer.demo(b -> b.network(n -> n.withMetricsPort(0)))) {
      HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
      HttpResponse<String> other =
          client.send(
              HttpRequest.newBuilder(
                      URI.create("http://127.0.0.1:" + server.metricsPort() + "/v2/models"))
                  .timeout(Duration.ofSeconds(30))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(other.statusCode()).isEqualTo(404);
      assertThat(other.body()).contains("/metrics");
    }
  }

  @Test
  void metricsPort_taken_failsTheStart_namingTheSetting() throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      int port = taken.getLocalPort();
      assertThatThrownBy(() -> TestServer.demo(b -> b.network(n -> n.withMetricsPort(port))))
          .isInstanceOf(InvalidConfigException.class)
          .hasMessageContaining("cannot listen on 127.0.0.1:" + port)
          .satisfies(
              e -> assertThat(((InvalidConfigException) e).setting()).isEqualTo("metrics-port"));
    }
  }

  @Test
  void metricsPort_sameAsAnotherPort_isRefused() {
    assertThatThrownBy(() -> new Network("127.0.0.1", 8000, 8001, 8000, 16))
        .isInstanceOf(InvalidConfigException.class)
        .satisfies(
            e -> assertThat(((InvalidConfigException) e).setting()).isEqualTo("metrics-port"));
    assertThatThrownBy(() -> new Network("127.0.0.1", 8000, 8001, 8001, 16))
        .isInstanceOf(InvalidConfigException.class);
    assertThatThrownBy(() -> new Network("127.0.0.1", 8000, 8001, -2, 16))
        .isInstanceOf(InvalidConfigException.class);
  }
}
