package dev.modelkeeper.server.config;

import io.soabase.recordbuilder.core.RecordBuilder;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Who may change the server's state.
 *
 * @param authToken the bearer token management endpoints require; null leaves them open
 * @param allowedOrigins web origins (e.g. {@code https://app.example.com}, or {@code *} for any)
 *     whose pages may send requests that change state; requests carrying any other {@code Origin}
 *     than the server's own are answered 403
 */
@RecordBuilder
public record Security(@Nullable String authToken, List<String> allowedOrigins)
    implements SecurityBuilder.With {

  public static final Security DEFAULTS = new Security(null, List.of());

  public Security {
    if (authToken != null && authToken.isBlank()) {
      throw new InvalidConfigException("auth-token", "must not be blank when given");
    }
    Check.notBlank("allowed-origins", allowedOrigins, "origin");
    allowedOrigins = List.copyOf(allowedOrigins);
  }

  @Override
  public String toString() {
    return "Security[auth=" + (authToken != null ? "on" : "off") + ", " + allowedOrigins + "]";
  }
}
