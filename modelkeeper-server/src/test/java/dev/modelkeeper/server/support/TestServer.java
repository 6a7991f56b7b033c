package dev.modelkeeper.server.support;

import dev.modelkeeper.onnx.ModelRepository;
import dev.modelkeeper.server.ModelKeeperServer;
import dev.modelkeeper.server.config.ServerConfig;
import java.util.function.UnaryOperator;

/** Starts real servers on a free loopback port for tests. Stateless and thread-safe. */
public final class TestServer {

  private TestServer() {}

  /** A builder bound to 127.0.0.1 on any free port, gRPC off, with short shutdown for tests. */
  public static ServerConfig.Builder config(ModelRepository repository) {
    return ServerConfig.builder(repository)
        .host("127.0.0.1")
        .port(0)
        .grpcPort(ServerConfig.GRPC_OFF)
        .shutdownTimeout(java.time.Duration.ofSeconds(10));
  }

  public static ModelKeeperServer start(ServerConfig config) {
    return ModelKeeperServer.start(config);
  }

  /** A server over the fake models, configured further by {@code tweak}. */
  public static ModelKeeperServer fake(
      FakeModels models, UnaryOperator<ServerConfig.Builder> tweak) {
    return ModelKeeperServer.start(tweak.apply(config(models).registry(models)).build());
  }

  /** A server over the demo repository, configured further by {@code tweak}. */
  public static ModelKeeperServer demo(UnaryOperator<ServerConfig.Builder> tweak) {
    return ModelKeeperServer.start(tweak.apply(config(DemoRepo.repository())).build());
  }
}
