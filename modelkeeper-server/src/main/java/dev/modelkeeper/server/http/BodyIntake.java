package dev.modelkeeper.server.http;

import dev.modelkeeper.server.admission.DirectBuffers;
import dev.modelkeeper.server.admission.InflightBytes;
import dev.modelkeeper.server.admission.RequestBytes;
import dev.modelkeeper.server.errors.BadRequestException;
import dev.modelkeeper.server.errors.PayloadTooLargeException;
import dev.modelkeeper.server.errors.UnavailableException;
import dev.modelkeeper.server.http.compression.BodyInflation;
import dev.modelkeeper.server.observability.RateLimitedLog;
import dev.modelkeeper.server.observability.ServerMetrics;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpHeaderValue;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.io.EofException;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * Receives every request body in full, asynchronously, before any route sees the request, so no
 * HTTP thread ever waits for a client's bytes. Thread-safe.
 *
 * <p>For each request with a body, in order: an unsupported {@code Content-Encoding} is answered
 * 415 and a {@code Content-Length} over the limit 413, before any byte is read; the body's bytes
 * are reserved in the server's {@link InflightBytes} (the announced length at once, a chunked body
 * step by step as it arrives), waiting without a thread when the budget is full, up to the
 * admission timeout (then 503 with {@code Retry-After}); the bytes are read as the client sends
 * them, and a body that has not arrived in full within the body read timeout is answered 408 and
 * its connection closed. A body that breaks off is answered 400 and closed: with one DEBUG line
 * when the client closed its connection (early EOF), with one rate-limited WARN line when the body
 * is malformed (bad chunked encoding). Only a complete body goes on to the routes, as a {@link
 * RequestBody} attribute (and as the request's content, for routes that read it).
 *
 * <p>A body in {@code Content-Encoding: gzip} or {@code deflate} is received so, then inflated step
 * by step within the same limit and budget before it goes on ({@code BodyInflation}).
 *
 * <p>The request's bytes return to the budget once its response is done and every worker that holds
 * them let go ({@link RequestBytes}). Callbacks run on Jetty threads and on the timer.
 */
public final class BodyIntake extends Handler.Wrapper {

  private static final System.Logger LOG = System.getLogger(BodyIntake.class.getName());

  private static final long CHUNKED_STEP = 1 << 20;

  private final long maxBodyBytes;
  private final Duration readTimeout;
  private final InflightBytes budget;
  private final ScheduledExecutorService timer;
  private final ErrorMapper errors;
  private final ServerMetrics metrics;
  private final RateLimitedLog brokenBodies;
  private final DirectBuffers offHeap;
  private final Set<Exchange> live = ConcurrentHashMap.newKeySet();
  private volatile boolean stopping;

  public BodyIntake(
      long maxBodyBytes,
      Duration readTimeout,
      InflightBytes budget,
      ScheduledExecutorService timer,
      ErrorMapper errors,
      ServerMetrics metrics,
      RateLimitedLog brokenBodies,
      DirectBuffers offHeap) {
    this.maxBodyBytes = maxBodyBytes;
    this.offHeap = offHeap;
    this.readTimeout = readTimeout;
    this.budget = budget;
    this.timer = timer;
    this.errors = errors;
    this.metrics = metrics;
    this.brokenBodies = brokenBodies;
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) throws Exception {
    long length = request.getLength();
    boolean chunked = request.getHeaders().contains(HttpHeader.TRANSFER_ENCODING);
    if (length <= 0 && !chunked) {
      return super.handle(request, response, callback);
    }
    String encoding; // every Content-Encoding header counts, not only the first
    try {
      encoding =
          BodyInflation.encoding(request.getHeaders().getValuesList(HttpHeader.CONTENT_ENCODING));
    } catch (UnsupportedMediaTypeException e) {
      refuse(request, response, callback, e);
      return true;
    }
    if (length > maxBodyBytes) {
      refuse(request, response, callback, tooLarge(length + " bytes"));
      return true;
    }
    Exchange x = new Exchange(request, response, callback, length, encoding);
    live.add(x);
    x.start();
    return true;
  }

  /**
   * Answers every body still being received or waiting for memory with {@code failure}, and from
   * now on a body cut off by the connectors closing gets 503 (at shutdown).
   */
  public void abortAll(RuntimeException failure) {
    stopping = true;
    for (Exchange x : live) {
      x.finish(failure);
    }
  }

  private PayloadTooLargeException tooLarge(String size) {
    return new PayloadTooLargeException(
        "the request body of " + size + " is larger than the limit of " + maxBodyBytes + " bytes");
  }

  private void refuse(Request request, Response response, Callback callback, RuntimeException e) {
    HttpResult r = errors.toResult(e, request.getId());
    response.setStatus(r.status());
    r.headers().forEach((k, v) -> response.getHeaders().put(k, v));
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, r.contentType());
    // the unread rest of the body would have to be drained first: close the connection instead
    response.getHeaders().put(HttpHeader.CONNECTION, HttpHeaderValue.CLOSE.asString());
    response.write(true, ByteBuffer.wrap(r.body()), callback);
  }

  /** One request whose body is being received; its state changes on one thread at a time. */
  private final class Exchange {
    private final Request request;
    private final Response response;
    private final Callback callback;
    private final RequestBytes bytes = new RequestBytes(budget);
    private final RequestBody body;
    private final String encoding; // gzip or deflate; null when the body is not compressed
    private final AtomicBoolean finished = new AtomicBoolean();
    private volatile ScheduledFuture<?> deadline;
    private long reserved;
    private Content.Chunk pending;

    Exchange(Request request, Response response, Callback callback, long length, String encoding) {
      this.request = request;
      this.response = response;
      this.callback = callback;
      this.body = new RequestBody(bytes, length, encoding == null ? offHeap : null);
      this.encoding = encoding;
    }

    void start() {
      deadline = timer.schedule(this::timedOut, readTimeout.toNanos(), TimeUnit.NANOSECONDS);
      long length = request.getLength();
      if (length > 0) {
        reserveThenRead(length);
      } else {
        read();
      }
    }

    private void reserveThenRead(long n) {
      bytes
          .reserveAsync(n)
          .whenComplete(
              (ok, failure) -> {
                if (failure != null) {
                  finish(
                      failure instanceof RuntimeException
                          ? (RuntimeException) failure
                          : new IllegalStateException(failure));
                } else {
                  reserved += n;
                  read();
                }
              });
    }

    /** Reads what has arrived; asks to be called again when more arrives. */
    private void read() {
      try {
        while (!finished.get()) {
          Content.Chunk chunk = pending != null ? pending : request.read();
          pending = null;
          if (chunk == null) {
            request.demand(this::read);
            return;
          }
          if (Content.Chunk.isFailure(chunk)) {
            broken(chunk.getFailure());
            return;
          }
          ByteBuffer data = chunk.getByteBuffer();
          long after = body.length() + data.remaining();
          if (after > maxBodyBytes) {
            chunk.release();
            finish(tooLarge("more than " + maxBodyBytes + " bytes"));
            return;
          }
          if (after > reserved) {
            pending = chunk;
            reserveThenRead(
                Math.min(Math.max(after - reserved, CHUNKED_STEP), maxBodyBytes - reserved));
            return;
          }
          body.append(data);
          boolean last = chunk.isLast();
          chunk.release();
          if (last && encoding != null) { // inflated within the limit, then passed on
            BodyInflation.inflate(encoding, body, maxBodyBytes, this::forward, this::finish);
            return;
          } else if (last) {
            forward(body);
            return;
          }
        }
      } catch (Throwable t) {
        finish(t instanceof RuntimeException ? (RuntimeException) t : new IllegalStateException(t));
      }
    }

    private void broken(Throwable cause) {
      if (cause instanceof TimeoutException && stopping) {
        finish(new UnavailableException("the server is shutting down", Duration.ofSeconds(1)));
        return;
      }
      if (cause instanceof TimeoutException) {
        timedOut();
        return;
      }
      if (cause instanceof EofException) { // the client closed its connection: one DEBUG line
        LOG.log(
            Level.DEBUG,
            "request {0}: the client left after {1} bytes of its body",
            request.getId(),
            String.valueOf(body.length()));
        finish(new BadRequestException("the request body is incomplete"));
        return;
      }
      brokenBodies.warn(
          "a request body broke off after "
              + body.length()
              + " bytes ("
              + (cause.getMessage() != null ? cause.getMessage() : cause.getClass().getSimpleName())
              + "); answered 400");
      finish(new BadRequestException("the request body is incomplete or malformed"));
    }

    private void timedOut() {
      if (finished.get()) {
        return;
      }
      metrics.slowClient();
      finish(
          new RequestTimeoutException(
              "the request body did not arrive within "
                  + readTimeout.toMillis()
                  + " ms ("
                  + body.length()
                  + " bytes received)"));
    }

    /** Passes the complete request, with {@code body}, on to the routes. */
    private void forward(RequestBody body) {
      if (!finished.compareAndSet(false, true)) {
        return;
      }
      cancelDeadline();
      live.remove(this);
      Request buffered = new BufferedRequest(request, body);
      buffered.setAttribute(RequestBody.ATTRIBUTE, body);
      Callback done =
          new Callback.Nested(callback) {
            @Override
            public void succeeded() {
              bytes.abandon();
              bytes.release();
              super.succeeded();
            }

            @Override
            public void failed(Throwable x) {
              bytes.abandon();
              bytes.release();
              super.failed(x);
            }
          };
      try {
        if (!BodyIntake.super.handle(buffered, response, done)) {
          Response.writeError(buffered, response, done, 404);
        }
      } catch (Throwable t) {
        done.failed(t);
      }
    }

    /** Answers the request with {@code failure} and returns its bytes, unless it was answered. */
    void finish(RuntimeException failure) {
      if (!finished.compareAndSet(false, true)) {
        return;
      }
      cancelDeadline();
      live.remove(this);
      Content.Chunk p = pending;
      if (p != null) {
        pending = null;
        p.release();
      }
      bytes.abandon();
      Callback done = Callback.from(callback, bytes::release);
      if (response.isCommitted()) {
        done.failed(failure);
      } else {
        refuse(request, response, done, failure);
      }
    }

    private void cancelDeadline() {
      ScheduledFuture<?> d = deadline;
      if (d != null) {
        d.cancel(false);
      }
    }
  }

  /** The request as the routes see it: its content is the body already received. */
  private static final class BufferedRequest extends Request.Wrapper {
    private final List<ByteBuffer> buffers;
    private int next;

    BufferedRequest(Request request, RequestBody body) {
      super(request);
      this.buffers = body.buffers();
    }

    @Override
    public Content.Chunk read() {
      synchronized (this) {
        if (next >= buffers.size()) {
          return Content.Chunk.EOF;
        }
        ByteBuffer b = buffers.get(next++);
        return Content.Chunk.from(b.slice(), next == buffers.size());
      }
    }

    @Override
    public void demand(Runnable demandCallback) {
      demandCallback.run();
    }

    @Override
    public void fail(Throwable failure) {
      // the body was received in full; nothing is left to fail
    }
  }
}
