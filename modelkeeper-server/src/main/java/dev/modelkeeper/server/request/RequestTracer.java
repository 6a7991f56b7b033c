package dev.modelkeeper.server.request;

import java.util.Map;
import java.util.function.Function;

/**
 * Starts the trace of each request a transport receives, continuing the caller's trace context (W3C
 * {@code traceparent}) read from its headers. The observability room implements it; {@link #OFF}
 * traces nothing and costs a field read per request. Implementations are thread-safe.
 */
public interface RequestTracer {

  /** Traces nothing: every trace is {@link RequestTrace#NONE}. */
  RequestTracer OFF =
      new RequestTracer() {
        @Override
        public boolean on() {
          return false;
        }

        @Override
        public RequestTrace start(
            String name, Function<String, String> header, Map<String, String> attributes) {
          return RequestTrace.NONE;
        }
      };

  /** Whether requests are traced at all. */
  boolean on();

  /**
   * Starts the trace of one request named {@code name}, continuing the trace its headers carry
   * (read with {@code header}, given lower-case names), else a new one; with {@code attributes}.
   */
  RequestTrace start(String name, Function<String, String> header, Map<String, String> attributes);
}
