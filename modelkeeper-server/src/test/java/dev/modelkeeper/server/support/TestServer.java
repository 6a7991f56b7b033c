package dev.modelkeeper.server.support;

import dev.modelkeeper.onnx.ModelRepository;
import dev.modelkeeper.server.ModelKeeperServer;
import dev.modelkeeper.server.config.ServerConfig;
import dev.modelkeeper.testkit.DemoRepo;
import dev.modelkeeper.testkit.FakeModels;
import java.time.Duration;
import java.util.function.UnaryOperator;

/** Starts real servers on a free loopback port for tests. Stateless and thread-safe. */
public final class TestServer {

  private TestServer() {}

  /** Settings bound to 127.0.0.1 on any free port, gRPC off, with short shutdown for tests. */
  public static ServerConfig config(ModelRepository repository) {
    return ServerConfig.of(repository)
        .network(
            n ->
                n.withHost("127.0.0.1")
                    .withPort(0)
                    .withGrpcPort(ServerConfig.GRPC_OFF)
                    .withMetricsPort(ServerConfig.METRICS_OFF))
        .timeouts(t -> t.withShutdown(Duration.ofSeconds(10)));
  }

  public static ModelKeeperServer start(ServerConfig config) {
    return ModelKeeperServer.start(config);
  }

  /** A server over the fake models, configured further by {@code tweak}. */
  public static ModelKeeperServer fake(FakeModels models, UnaryOperator<ServerConfig> tweak) {
    return ModelKeeperServer.start(tweak.apply(config(models).withRegistry(models)));
  }

  /** A server over the demo repository, configured further by {@code tweak}. */
  public static ModelKeeperServer demo(UnaryOperator<ServerConfig> tweak) {
    return ModelKeeperServer.start(tweak.apply(config(DemoRepo.repository())));
  }
}
