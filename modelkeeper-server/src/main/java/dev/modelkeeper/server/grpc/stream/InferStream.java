package dev.modelkeeper.server.grpc.stream;

import dev.modelkeeper.server.grpc.ModelInferRequest;
import dev.modelkeeper.server.grpc.ModelInferResponse;
import dev.modelkeeper.server.grpc.ModelStreamInferResponse;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.lang.System.Logger.Level;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * One {@code ModelStreamInfer} call: each request is started as it arrives (several run at once, as
 * separate unary calls would), and the answers leave in the order the requests came; a request that
 * fails is answered with its {@code error_message} and the stream goes on. Thread-safe: the
 * transport's thread delivers requests, model threads complete them, and one lock orders the
 * answers.
 *
 * <p>Flow control: the stream reads its next request only while fewer than {@link #WINDOW} are
 * unanswered and the client is reading its answers ({@link ServerCallStreamObserver#isReady}). A
 * client that stops reading therefore stops the stream within {@link #WINDOW} requests: its runs
 * finish and free their model slots, their answers wait here (their bytes still counted in the
 * in-flight budget until they leave), and no further request is read, so its sends wait in HTTP/2's
 * own flow control. A client that cancels the stream, or whose deadline passes, withdraws every
 * request not yet run.
 */
public final class InferStream implements StreamObserver<ModelInferRequest> {

  /** The most requests of one stream started and not yet answered. */
  public static final int WINDOW = 32;

  private static final System.Logger LOG = System.getLogger(InferStream.class.getName());

  /**
   * A started request.
   *
   * @param answer its response, or its failure
   * @param release returns what the request holds once its answer has left or is dropped
   */
  public record Started(CompletableFuture<ModelInferResponse> answer, Runnable release) {}

  private final ServerCallStreamObserver<ModelStreamInferResponse> call;
  private final Function<ModelInferRequest, Started> start;
  private final Function<Throwable, String> describe;

  // @GuardedBy("this")
  private final ArrayDeque<Started> unanswered = new ArrayDeque<>();

  // @GuardedBy("this"): a request asked of the transport and not yet delivered
  private boolean reading;

  // @GuardedBy("this"): the client sent its last request
  private boolean halfClosed;

  // @GuardedBy("this"): the call is over (completed, failed or cancelled)
  private boolean over;

  private InferStream(
      ServerCallStreamObserver<ModelStreamInferResponse> call,
      Function<ModelInferRequest, Started> start,
      Function<Throwable, String> describe) {
    this.call = call;
    this.start = start;
    this.describe = describe;
  }

  /**
   * Serves the stream answered through {@code out}: {@code start} begins one request, {@code
   * describe} turns a failure into the error message the client reads. Call from the service
   * method, before it returns.
   */
  public static StreamObserver<ModelInferRequest> serve(
      StreamObserver<ModelStreamInferResponse> out,
      Function<ModelInferRequest, Started> start,
      Function<Throwable, String> describe) {
    ServerCallStreamObserver<ModelStreamInferResponse> call =
        (ServerCallStreamObserver<ModelStreamInferResponse>) out;
    call.disableAutoRequest();
    InferStream stream = new InferStream(call, start, describe);
    call.setOnReadyHandler(stream::drain);
    call.setOnCancelHandler(stream::cancelled);
    stream.drain();
    return stream;
  }

  @Override
  public void onNext(ModelInferRequest request) {
    Started s;
    try {
      s = start.apply(request);
    } catch (RuntimeException e) {
      s = new Started(CompletableFuture.failedFuture(e), () -> {});
    }
    synchronized (this) {
      reading = false;
      if (over) {
        s.answer().cancel(true);
        s.release().run();
        return;
      }
      unanswered.add(s);
    }
    s.answer().whenComplete((r, t) -> drain());
    drain();
  }

  @Override
  public void onError(Throwable t) {
    cancelled(); // the client's side ended abnormally: nobody reads the answers any more
  }

  @Override
  public void onCompleted() {
    synchronized (this) {
      halfClosed = true;
    }
    drain();
  }

  /**
   * Sends every answer that is ready, in order, while the client reads; then reads the next request
   * if there is room; completes the call once the client is done and everything is answered.
   */
  private void drain() {
    synchronized (this) {
      if (over) {
        return;
      }
      try {
        while (!unanswered.isEmpty() && unanswered.peek().answer().isDone() && call.isReady()) {
          Started s = unanswered.poll();
          try {
            call.onNext(answer(s));
          } finally {
            s.release().run();
          }
        }
        if (halfClosed && unanswered.isEmpty()) {
          over = true;
          call.onCompleted();
          return;
        }
        if (!halfClosed && !reading && unanswered.size() < WINDOW && call.isReady()) {
          reading = true;
          call.request(1);
        }
      } catch (RuntimeException e) { // cancelled meanwhile: the cancel handler cleans up
        LOG.log(Level.DEBUG, "an inference stream ended while answering: {0}", e.toString());
      }
    }
  }

  private ModelStreamInferResponse answer(Started s) {
    ModelInferResponse r;
    try {
      r = s.answer().join();
    } catch (RuntimeException e) {
      return ModelStreamInferResponse.newBuilder().setErrorMessage(describe.apply(e)).build();
    }
    return ModelStreamInferResponse.newBuilder().setInferResponse(r).build();
  }

  /** The call ended without us: withdraw what has not run and return what is held. */
  private void cancelled() {
    Started[] left;
    synchronized (this) {
      over = true;
      left = unanswered.toArray(new Started[0]);
      unanswered.clear();
    }
    LOG.log(Level.DEBUG, "an inference stream was cancelled with {0} unanswered", left.length);
    for (Started s : left) {
      s.answer().cancel(true);
      s.release().run();
    }
  }
}
