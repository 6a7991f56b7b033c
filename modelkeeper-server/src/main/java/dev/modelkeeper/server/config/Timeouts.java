package dev.modelkeeper.server.config;

import dev.modelkeeper.core.CacheOptions;
import dev.modelkeeper.core.ManagerOptions;
import io.soabase.recordbuilder.core.RecordBuilder;
import java.time.Duration;

/**
 * How long each wait may last; the core's own defaults unless set.
 *
 * @param lifecycle how long a request waits for another load or unload of the same model
 * @param drain how long an unload waits for running inferences of the model
 * @param capacity how long a load waits for room when every resident model is busy or pinned
 * @param idle models unused for this long are unloaded (leased or pinned ones never); 0 is never
 * @param loadFailureBackoff how long loads of a model are refused (503) after its load failed;
 *     doubles on repeated failures up to {@link ManagerOptions#BACKOFF_GROWTH} times this
 * @param request how long one request may take before it is answered 503
 * @param shutdown how long closing the server lets in-flight requests finish
 * @param admission how long a request waits for room in the in-flight budget before it gets 503
 * @param bodyRead how long a client has to send a request's body or gRPC message in full, and a new
 *     connection its first headers or HTTP/2 preface; slower ones get 408 or DEADLINE_EXCEEDED
 */
@RecordBuilder
public record Timeouts(
    Duration lifecycle,
    Duration drain,
    Duration capacity,
    Duration idle,
    Duration loadFailureBackoff,
    Duration request,
    Duration shutdown,
    Duration admission,
    Duration bodyRead)
    implements TimeoutsBuilder.With {

  public static final Timeouts DEFAULTS =
      new Timeouts(
          ManagerOptions.defaults().lifecycleTimeout(),
          ManagerOptions.defaults().drainTimeout(),
          CacheOptions.builder(1).build().capacityTimeout(),
          CacheOptions.builder(1).build().expireAfterIdle(),
          ManagerOptions.defaults().failureBackoff(),
          Duration.ofSeconds(120),
          Duration.ofSeconds(30),
          Duration.ofSeconds(10),
          Duration.ofSeconds(30));

  public Timeouts {
    Check.positive("lifecycle-timeout", lifecycle);
    Check.positive("drain-timeout", drain);
    Check.positive("capacity-timeout", capacity);
    Check.notNegative("idle-timeout", idle);
    Check.positive("load-failure-backoff", loadFailureBackoff);
    Check.positive("request-timeout", request);
    Check.positive("shutdown-timeout", shutdown);
    Check.positive("admission-timeout", admission);
    Check.positive("body-read-timeout", bodyRead);
  }
}
