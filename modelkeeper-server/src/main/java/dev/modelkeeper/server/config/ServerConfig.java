package dev.modelkeeper.server.config;

import dev.modelkeeper.core.ModelRegistry;
import dev.modelkeeper.onnx.ModelRepository;
import dev.modelkeeper.server.request.RequestTracer;
import io.soabase.recordbuilder.core.RecordBuilder;
import java.util.List;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;

/**
 * The immutable settings of a server, in groups: start from {@link #of(ModelRepository)} and change
 * a group ({@code config.timeouts(t -> t.withCapacity(Duration.ofSeconds(5)))}) or a setting of its
 * own ({@code withPin(...)}). Every record checks its values when made and throws {@link
 * InvalidConfigException} naming the bad setting, so a server never starts half-configured.
 *
 * @param repository where models are listed and found
 * @param registry builds the models; null (the default) loads them from the repository
 * @param preload models loaded before the server reports ready, in order
 * @param pin models never evicted by the budget; also loaded before the server reports ready
 * @param tracer traces each REST request and gRPC call, continuing the caller's {@code
 *     traceparent}; {@link RequestTracer#OFF} traces nothing
 */
@RecordBuilder
public record ServerConfig(
    ModelRepository repository,
    @Nullable ModelRegistry registry,
    Network network,
    Security security,
    Budgets budgets,
    Timeouts timeouts,
    Scheduling scheduling,
    List<String> preload,
    List<String> pin,
    RequestTracer tracer)
    implements ServerConfigBuilder.With {

  /** A {@link Network#grpcPort()} that turns the gRPC endpoint off. */
  public static final int GRPC_OFF = -1;

  /** A {@link Network#metricsPort()} that turns the metrics endpoint off. */
  public static final int METRICS_OFF = -1;

  public ServerConfig {
    if (repository == null) {
      throw new InvalidConfigException("repository", "no model repository given");
    }
    Check.notBlank("preload", preload, "model id");
    Check.notBlank("pin", pin, "model id");
    if (pin.size() > budgets.maxModels()) {
      throw new InvalidConfigException(
          "pin",
          pin.size() + " pinned models cannot fit a budget of max-models=" + budgets.maxModels());
    }
    preload = List.copyOf(preload);
    pin = List.copyOf(pin);
  }

  /** Settings that serve {@code repository} with every group's defaults. */
  public static ServerConfig of(ModelRepository repository) {
    return new ServerConfig(
        repository,
        null,
        Network.DEFAULTS,
        Security.DEFAULTS,
        Budgets.DEFAULTS,
        Timeouts.DEFAULTS,
        Scheduling.DEFAULTS,
        List.of(),
        List.of(),
        RequestTracer.OFF);
  }

  public ServerConfig network(UnaryOperator<Network> change) {
    return withNetwork(change.apply(network));
  }

  public ServerConfig security(UnaryOperator<Security> change) {
    return withSecurity(change.apply(security));
  }

  public ServerConfig budgets(UnaryOperator<Budgets> change) {
    return withBudgets(change.apply(budgets));
  }

  public ServerConfig timeouts(UnaryOperator<Timeouts> change) {
    return withTimeouts(change.apply(timeouts));
  }

  public ServerConfig scheduling(UnaryOperator<Scheduling> change) {
    return withScheduling(change.apply(scheduling));
  }

  @Override
  public String toString() {
    return "ServerConfig[" + repository.location() + ", " + network + ", " + security + "]";
  }
}
