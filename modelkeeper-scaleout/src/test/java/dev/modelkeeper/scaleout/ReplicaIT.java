package dev.modelkeeper.scaleout;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ReplicaIT {

  @Test
  void awaitReady_whenAnotherServerHoldsThePort_failsInsteadOfTakingItsAnswer() throws Exception {
    // another process on the replica's port, answering 200 to everything, as a second replica
    // that drew the same port would: the replica cannot bind and exits
    int port = Ports.free();
    HttpServer other =
        HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 0);
    other.createContext(
        "/",
        exchange -> {
          exchange.sendResponseHeaders(200, -1);
          exchange.close();
        });
    other.start();
    Path logs =
        Files.createTempDirectory(Files.createDirectories(Path.of("target", "replica-it")), "run-");
    try (Replica replica =
        new Replica(
            "r1",
            Project.root().resolve("modelkeeper-cli/target/modelkeeper.jar"),
            port,
            List.of(),
            logs)) {
      replica.start();
      assertThatThrownBy(() -> replica.awaitReady(Duration.ofSeconds(90)))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("r1 exited before it was ready")
          .hasMessageContaining("cannot listen on 127.0.0.1:" + port);
    } finally {
      other.stop(0);
    }
  }
}
