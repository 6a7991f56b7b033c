package dev.modelkeeper.server.config;

import io.soabase.recordbuilder.core.RecordBuilder;

/**
 * Where the server listens.
 *
 * @param host the interface to bind: this machine only by default; {@code 0.0.0.0} listens on every
 *     interface (in a container, for instance)
 * @param port the HTTP port; 0 picks any free port (read it back from the started server)
 * @param grpcPort the gRPC port; 0 picks any free port and {@link ServerConfig#GRPC_OFF} serves
 *     none
 * @param metricsPort the port of Triton's metrics ({@code /metrics}, Prometheus text); 0 picks any
 *     free port and {@link ServerConfig#METRICS_OFF} serves none
 * @param maxConnections the most connections open at once, REST and gRPC each; more wait
 */
@RecordBuilder
public record Network(String host, int port, int grpcPort, int metricsPort, int maxConnections)
    implements NetworkBuilder.With {

  public static final Network DEFAULTS = new Network("127.0.0.1", 8000, 8001, 8002, 1024);

  public Network {
    Check.notEmpty("host", host);
    Check.between("port", port, 0, 65535);
    Check.between("grpc-port", grpcPort, ServerConfig.GRPC_OFF, 65535);
    if (grpcPort > 0 && grpcPort == port) {
      throw new InvalidConfigException("grpc-port", "must differ from the HTTP port " + port);
    }
    Check.between("metrics-port", metricsPort, ServerConfig.METRICS_OFF, 65535);
    if (metricsPort > 0 && (metricsPort == port || metricsPort == grpcPort)) {
      throw new InvalidConfigException(
          "metrics-port",
          "must differ from the HTTP port " + port + " and the gRPC port " + grpcPort);
    }
    Check.atLeast("max-connections", maxConnections, 1);
  }
}
