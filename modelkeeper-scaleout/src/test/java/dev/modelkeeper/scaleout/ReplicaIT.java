package dev.modelkeeper.scaleout;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
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
    HttpServer other = answering200(port);
    try (Replica replica = replica(port)) {
      replica.start();
      assertExitsUnableToBind(replica, port);
    } finally {
      other.stop(0);
    }
  }

  @Test
  void awaitReady_afterARestart_readsOnlyWhatThisStartWrote() throws Exception {
    // the log is appended across restarts: the first start's "serving" line must not vouch for
    // a second start that could not bind
    int port = Ports.free();
    try (Replica replica = replica(port)) {
      replica.start();
      replica.awaitReady(Duration.ofSeconds(90));
      replica.kill();
      HttpServer other = answering200(port);
      try {
        replica.start();
        assertExitsUnableToBind(replica, port);
      } finally {
        other.stop(0);
      }
    }
  }

  private static void assertExitsUnableToBind(Replica replica, int port) {
    assertThatThrownBy(() -> replica.awaitReady(Duration.ofSeconds(90)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("r1 exited before it was ready")
        .hasMessageContaining("cannot listen on 127.0.0.1:" + port);
  }

  /** Replica r1 of the packaged jar on {@code port} (not started), its log in a new folder. */
  private static Replica replica(int port) throws IOException {
    Path logs =
        Files.createTempDirectory(Files.createDirectories(Path.of("target", "replica-it")), "run-");
    return new Replica(
        "r1",
        Project.root().resolve("modelkeeper-cli/target/modelkeeper.jar"),
        port,
        serving(logs),
        logs);
  }

  /**
   * Flags for a replica serving one small generated model from a local folder under {@code dir}.
   */
  private static List<String> serving(Path dir) throws IOException {
    Path repo = Files.createDirectories(dir.resolve("repository"));
    GeneratedRepository.write(repo, 1);
    return List.of("--repository", repo.toString(), "--cache-dir", dir.resolve("cache").toString());
  }

  /** A server on {@code port} that answers 200 to everything, as another replica would. */
  private static HttpServer answering200(int port) throws IOException {
    HttpServer other =
        HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 0);
    other.createContext(
        "/",
        exchange -> {
          exchange.sendResponseHeaders(200, -1);
          exchange.close();
        });
    other.start();
    return other;
  }
}
