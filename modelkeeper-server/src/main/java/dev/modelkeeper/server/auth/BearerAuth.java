package dev.modelkeeper.server.auth;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;

/**
 * Requires {@code Authorization: Bearer <token>} and compares the token in constant time. Only
 * installed when a token is configured, so open servers pay nothing. Immutable and thread-safe.
 */
public final class BearerAuth {

  private static final String PREFIX = "Bearer ";

  private final byte[] token;

  public BearerAuth(String token) {
    this.token = token.getBytes(StandardCharsets.UTF_8);
  }

  /** Throws {@link UnauthorizedException} unless {@code header} is {@code Bearer <token>}. */
  public void check(String header) {
    if (header == null || !header.regionMatches(true, 0, PREFIX, 0, PREFIX.length())) {
      throw new UnauthorizedException("this endpoint needs 'Authorization: Bearer <token>'");
    }
    byte[] given = header.substring(PREFIX.length()).trim().getBytes(StandardCharsets.UTF_8);
    if (!MessageDigest.isEqual(given, token)) {
      throw new UnauthorizedException("the bearer token is not valid");
    }
  }
}
