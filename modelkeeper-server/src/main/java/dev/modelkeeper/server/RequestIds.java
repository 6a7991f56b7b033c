package dev.modelkeeper.server;

import io.javalin.http.Context;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;

/**
 * Gives every request an identifier for logs and error messages: for REST the client's {@code
 * X-Request-Id} when it is short and plain, else a new one, echoed in the response header; for gRPC
 * a new one. Thread-safe.
 */
final class RequestIds {

  static final String HEADER = "X-Request-Id";
  private static final String ATTRIBUTE = "modelkeeper.requestId";
  private static final Pattern PLAIN = Pattern.compile("[A-Za-z0-9._:-]{1,64}");

  private final String prefix = Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 16);
  private final AtomicLong issued = new AtomicLong();

  /** Assigns the request's identifier and sets the response header; runs before every handler. */
  void assign(Context ctx) {
    String given = ctx.header(HEADER);
    String id = given != null && PLAIN.matcher(given).matches() ? given : next();
    ctx.attribute(ATTRIBUTE, id);
    ctx.header(HEADER, id);
  }

  /** A new identifier: this server's random prefix and a counter, unique within its run. */
  String next() {
    return prefix + "-" + Long.toHexString(issued.incrementAndGet());
  }

  /** The identifier {@link #assign} gave {@code ctx}, or {@code "-"} before that. */
  static String of(Context ctx) {
    String id = ctx.attribute(ATTRIBUTE);
    return id != null ? id : "-";
  }
}
