package dev.modelkeeper.server.grpc;

import dev.modelkeeper.server.admission.InflightBytes;
import dev.modelkeeper.server.observability.ServerMetrics;
import io.grpc.Context;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerStreamTracer;
import io.grpc.Status;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * gRPC request messages while they arrive, held to the limits of REST bodies. Thread-safe.
 *
 * <p>gRPC's transport collects a call's message before any handler sees it, so without this a
 * client could open many calls, send most of a large message on each and stop: memory the in-flight
 * budget never counted, held for as long as the connection stays open. Here every byte of a message
 * counts against the {@link InflightBytes} budget as it is received, without waiting (the transport
 * cannot stop reading one call, and they go ahead of reservations that wait, as they are returned
 * soon); a call whose bytes do not fit is ended with UNAVAILABLE. The bytes are returned when the
 * message is complete (the handler then reserves the message and its decoded tensors as for REST)
 * or the call ends. A call whose message is not complete within the body read timeout of its start
 * is ended with DEADLINE_EXCEEDED and counted as a slow client, as REST answers a slow body 408;
 * {@link #sweepOn} finds them. A stream ({@code ModelStreamInfer}) may wait for its first request
 * as long as it likes; its timeout runs from that request's first byte.
 *
 * <p>It is both the stream tracer factory, which sees the bytes, and the outermost interceptor,
 * which sees the call; the tracer hands itself to the interceptor through the call's context.
 */
public final class GrpcArrivals extends ServerStreamTracer.Factory implements ServerInterceptor {

  private static final System.Logger LOG = System.getLogger(GrpcArrivals.class.getName());

  private static final Context.Key<Arrival> ARRIVAL = Context.key("modelkeeper-grpc-arrival");

  /** Bounds of the period at which calls whose message is overdue are looked for. */
  private static final Duration SWEEP_MIN = Duration.ofMillis(10);

  private static final Duration SWEEP_MAX = Duration.ofSeconds(1);

  private static final Runnable CLOSED = () -> {};

  private static final int PENDING = 0;
  private static final int COMPLETE = 1;
  private static final int EXPIRED = 2;
  private static final int ENDED = 3;

  private final InflightBytes inflight;
  private final Duration timeout;
  private final ServerMetrics metrics;
  private final Set<Arrival> pending = ConcurrentHashMap.newKeySet();

  public GrpcArrivals(InflightBytes inflight, Duration timeout, ServerMetrics metrics) {
    this.inflight = inflight;
    this.timeout = timeout;
    this.metrics = metrics;
  }

  /** Sweeps on {@code timer} from now on, a tenth of the timeout apart (10 ms to 1 s). */
  public void sweepOn(ScheduledExecutorService timer) {
    long period =
        Math.max(SWEEP_MIN.toNanos(), Math.min(SWEEP_MAX.toNanos(), timeout.toNanos() / 10));
    timer.scheduleWithFixedDelay(this::sweep, period, period, TimeUnit.NANOSECONDS);
  }

  /** Ends the calls whose message is still incomplete a body read timeout after they started. */
  private void sweep() {
    long now = System.nanoTime();
    for (Arrival a : pending) {
      if (now - a.since >= timeout.toNanos() && !(a.streaming && a.held.get() == 0)) {
        try {
          a.expire();
        } catch (RuntimeException e) { // the call ended meanwhile; the next sweeps must still run
          LOG.log(System.Logger.Level.DEBUG, "ending an overdue gRPC call failed", e);
        }
      }
    }
  }

  /**
   * Runs {@code release} when the stream of the call in whose context this runs closes: how memory
   * a call's message lives in is given back. False, having registered nothing, outside a call of
   * this server's transport, when the stream has closed already, or when the call holds something
   * already.
   */
  static boolean holdUntilClosed(Runnable release) {
    Arrival a = ARRIVAL.get();
    return a != null && a.onClose.compareAndSet(null, release);
  }

  @Override
  public ServerStreamTracer newServerStreamTracer(String fullMethodName, Metadata headers) {
    Arrival a =
        new Arrival(
            fullMethodName.equals(
                GRPCInferenceServiceGrpc.getModelStreamInferMethod().getFullMethodName()));
    pending.add(a);
    return a;
  }

  @Override
  public <Q, A> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, A> call, Metadata headers, ServerCallHandler<Q, A> next) {
    Arrival a = ARRIVAL.get();
    if (a == null) { // not from this server's transport
      return next.startCall(call, headers);
    }
    if (!a.attach(call)) {
      return new ServerCall.Listener<Q>() {}; // ended already (its timeout passed)
    }
    // a call ended for its timeout may still see its message: it must not reach the handler
    return new ForwardingServerCallListener.SimpleForwardingServerCallListener<Q>(
        next.startCall(call, headers)) {
      @Override
      public void onMessage(Q message) {
        if (a.state.get() == COMPLETE) {
          super.onMessage(message);
        }
      }

      @Override
      public void onHalfClose() {
        if (a.state.get() == COMPLETE) {
          super.onHalfClose();
        }
      }
    };
  }

  /** One call's message on its way in; callbacks run on its transport thread and the timer. */
  private final class Arrival extends ServerStreamTracer {
    final boolean streaming;
    volatile long since = System.nanoTime(); // the call's start; a stream's first byte

    final AtomicInteger state = new AtomicInteger(PENDING);
    final AtomicLong held = new AtomicLong();
    final AtomicBoolean closed = new AtomicBoolean();
    final AtomicBoolean refused = new AtomicBoolean();
    volatile ServerCall<?, ?> call;

    Arrival(boolean streaming) {
      this.streaming = streaming;
    }

    /** What to run when the stream closes; {@link #CLOSED} once it has. */
    final AtomicReference<Runnable> onClose = new AtomicReference<>();

    @Override
    public Context filterContext(Context context) {
      return context.withValue(ARRIVAL, this);
    }

    /** Takes {@code c} as its call; false when it was ended meanwhile (and {@code c} closed). */
    boolean attach(ServerCall<?, ?> c) {
      call = c;
      if (state.get() == EXPIRED) {
        close(c);
        return false;
      }
      return true;
    }

    @Override
    public void inboundWireSize(long bytes) {
      if (state.get() == EXPIRED) { // more of a message already answered: reset its stream
        throw Status.DEADLINE_EXCEEDED
            .withDescription("the call ended: its message did not arrive in time")
            .asRuntimeException();
      }
      // thrown on the transport thread while it reads the message: gRPC ends the call with it (a
      // message never exceeds the budget alone: the budget is at least the largest request)
      if (!inflight.tryReserve(bytes)) {
        refused.set(true);
        throw Status.UNAVAILABLE
            .withDescription(
                "the server is busy: its in-flight request budget of "
                    + inflight.capacity()
                    + " bytes is in use; try again later")
            .asRuntimeException();
      }
      if (held.getAndAdd(bytes) == 0 && streaming) {
        since = System.nanoTime();
      }
    }

    @Override
    public void inboundMessageRead(int seqNo, long wireSize, long uncompressedSize) {
      state.compareAndSet(PENDING, COMPLETE);
      pending.remove(this);
      inflight.release(held.getAndSet(0));
    }

    @Override
    public void streamClosed(Status status) {
      Runnable release = onClose.getAndSet(CLOSED);
      if (release != null) {
        release.run();
      }
      long received = held.getAndSet(0);
      if (state.compareAndSet(PENDING, ENDED) && !refused.get()) {
        // neither answered by the server nor refused here: the client left mid-message
        LOG.log(
            System.Logger.Level.DEBUG,
            "gRPC call: the client left after {0} bytes of its message ({1})",
            String.valueOf(received),
            status.getCode());
      }
      pending.remove(this);
      inflight.release(received);
    }

    void expire() {
      if (!state.compareAndSet(PENDING, EXPIRED)) {
        return;
      }
      pending.remove(this);
      inflight.release(held.getAndSet(0)); // the stream may stay open until the client ends it
      metrics.slowClient();
      ServerCall<?, ?> c = call;
      if (c != null) {
        close(c);
      }
    }

    private void close(ServerCall<?, ?> c) {
      if (closed.compareAndSet(false, true)) {
        // the handler never saw this call, so nothing else uses it
        c.close(
            Status.DEADLINE_EXCEEDED.withDescription(
                "the request message did not arrive within "
                    + timeout.toMillis()
                    + " ms (the body read timeout)"),
            new Metadata());
      }
    }
  }
}
