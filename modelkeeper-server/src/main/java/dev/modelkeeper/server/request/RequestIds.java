package dev.modelkeeper.server.request;

import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;

/**
 * Gives every request an identifier for logs and error messages: the client's own when it is short
 * and plain (REST's {@code X-Request-Id}), else a new one. Thread-safe.
 */
public final class RequestIds {

  private static final Pattern PLAIN = Pattern.compile("[A-Za-z0-9._:-]{1,64}");

  private final String prefix = Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 16);
  private final AtomicLong issued = new AtomicLong();

  /** {@code given} when it is short and plain (letters, digits, {@code ._:-}), else a new one. */
  public String accept(String given) {
    return given != null && PLAIN.matcher(given).matches() ? given : next();
  }

  /** A new identifier: this server's random prefix and a counter, unique within its run. */
  public String next() {
    return prefix + "-" + Long.toHexString(issued.incrementAndGet());
  }
}
