package dev.modelkeeper.server.grpc;

import dev.modelkeeper.onnx.ModelMetadata;
import dev.modelkeeper.onnx.TensorSpec;
import dev.modelkeeper.onnx.TritonConfig;
import dev.modelkeeper.server.admission.DirectBuffers;
import dev.modelkeeper.server.auth.BearerAuth;
import dev.modelkeeper.server.auth.UnauthorizedException;
import dev.modelkeeper.server.control.ModelControl;
import dev.modelkeeper.server.engine.Engine;
import dev.modelkeeper.server.engine.InferenceService;
import dev.modelkeeper.server.engine.ServerState;
import dev.modelkeeper.server.engine.ServerVersion;
import dev.modelkeeper.server.errors.BadRequestException;
import dev.modelkeeper.server.errors.PathRedaction;
import dev.modelkeeper.server.grpc.compression.GrpcCompression;
import dev.modelkeeper.server.grpc.parsing.LenientParsing;
import dev.modelkeeper.server.grpc.sharedmemory.GrpcSharedMemory;
import dev.modelkeeper.server.grpc.stream.InferStream;
import dev.modelkeeper.server.request.InferRequest;
import dev.modelkeeper.server.request.ModelTarget;
import dev.modelkeeper.server.request.RequestIds;
import dev.modelkeeper.server.request.RequestTrace;
import dev.modelkeeper.server.sharedmemory.SharedMemoryException;
import dev.modelkeeper.server.sharedmemory.SharedMemoryRegions;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerStreamTracer;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.Channel;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandler;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandlerContext;
import io.grpc.netty.shaded.io.netty.channel.ChannelInboundHandlerAdapter;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.IoHandlerFactory;
import io.grpc.netty.shaded.io.netty.channel.MultiThreadIoEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.ServerChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollIoHandler;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.nio.NioIoHandler;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioServerSocketChannel;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * The gRPC endpoint: the {@code inference.GRPCInferenceService} of the Open Inference Protocol with
 * Triton's repository, system shared memory ({@code shm}) and streaming ({@code stream}) methods,
 * over the same inference path, repository operations, bearer token and error mapping as the REST
 * API; messages may be compressed ({@code compression}). Thread-safe.
 *
 * <p>Handlers run on the transport's event-loop threads and never wait there: an inference is
 * decoded there and queued on its model's executor, or run there when it can run at once and the
 * model's runs typically take at most {@value #QUICK_RUN_NANOS} ns (about what a hand-off to
 * another thread costs here); other calls that may load, run or unload a model, or read the
 * repository, run on the server's worker pool. Every call is bounded by the request timeout; a call
 * whose client cancels it or whose deadline passes is answered by gRPC at once and its work is
 * withdrawn or its worker interrupted, so a wait for a load or a lease stops. Messages larger than
 * the request size limit are refused with RESOURCE_EXHAUSTED before they are read; messages on
 * their way in are held to the in-flight budget and the body read timeout ({@link GrpcArrivals}).
 */
public final class GrpcEndpoint {

  /**
   * The longest typical run of a model that an event-loop thread runs itself rather than queueing
   * the call for a model thread.
   */
  public static final long QUICK_RUN_NANOS = 200_000;

  /**
   * Most calls one connection may have open at once; more wait in the client. HTTP/2's suggested
   * minimum: with the connection limit it bounds calls whose message has not arrived yet (about 1.7
   * kB of heap each) to 1024 x 100.
   */
  static final int MAX_CALLS_PER_CONNECTION = 100;

  /** Most streams a client may reset per connection within {@link #RESET_WINDOW_SECONDS}. */
  static final int MAX_RESETS_PER_WINDOW = 1000;

  static final int RESET_WINDOW_SECONDS = 10;

  /** A connection without calls for this long is closed (the client reconnects when it needs). */
  static final Duration MAX_CONNECTION_IDLE = Duration.ofMinutes(5);

  /** How long a connection may go without reading from its client before it is pinged. */
  static final Duration KEEPALIVE = Duration.ofMinutes(1);

  private static final System.Logger LOG = System.getLogger(GrpcEndpoint.class.getName());

  /** The methods that need the bearer token when one is configured, as REST's repository API. */
  private static final Set<String> PROTECTED =
      Set.of(
          GRPCInferenceServiceGrpc.getRepositoryIndexMethod().getFullMethodName(),
          GRPCInferenceServiceGrpc.getRepositoryModelLoadMethod().getFullMethodName(),
          GRPCInferenceServiceGrpc.getRepositoryModelUnloadMethod().getFullMethodName(),
          GRPCInferenceServiceGrpc.getSystemSharedMemoryRegisterMethod().getFullMethodName(),
          GRPCInferenceServiceGrpc.getSystemSharedMemoryUnregisterMethod().getFullMethodName(),
          GRPCInferenceServiceGrpc.getCudaSharedMemoryRegisterMethod().getFullMethodName(),
          GRPCInferenceServiceGrpc.getCudaSharedMemoryUnregisterMethod().getFullMethodName());

  private static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

  private final Server server;
  private final EventLoopGroup acceptor;
  private final EventLoopGroup transport;

  private GrpcEndpoint(Server server, EventLoopGroup acceptor, EventLoopGroup transport) {
    this.server = server;
    this.acceptor = acceptor;
    this.transport = transport;
  }

  /**
   * Binds {@code host:port} (0 = any free port) and starts serving.
   *
   * @throws IOException when the port cannot be bound
   */
  public static GrpcEndpoint start(
      String host,
      int port,
      int maxMessageBytes,
      int maxConnections,
      Duration handshakeTimeout,
      GrpcArrivals arrivals,
      List<ServerStreamTracer.Factory> tracers,
      Service service,
      BearerAuth auth,
      DirectBuffers offHeap)
      throws IOException {
    ServerInterceptor authorize =
        new ServerInterceptor() {
          @Override
          public <Q, A> ServerCall.Listener<Q> interceptCall(
              ServerCall<Q, A> call, Metadata headers, ServerCallHandler<Q, A> next) {
            if (auth != null
                && PROTECTED.contains(call.getMethodDescriptor().getFullMethodName())) {
              try {
                auth.check(headers.get(AUTHORIZATION));
              } catch (UnauthorizedException e) {
                call.close(GrpcErrors.toStatus(e, "grpc", PathRedaction.NONE), new Metadata());
                return new ServerCall.Listener<Q>() {};
              }
            }
            return next.startCall(call, headers);
          }
        };
    // the transport's own event loops, so that its listening channel can carry the connection
    // limit; epoll where Netty's native transport loads, as gRPC's default
    boolean epoll = Epoll.isAvailable();
    IoHandlerFactory io = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
    EventLoopGroup acceptor =
        new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("grpc-accept", true), io);
    // one event loop per processor, as gRPC's default: Netty's own default of two per processor
    // took twice the CPU per call at 8 clients here (each loop woken for fewer calls)
    EventLoopGroup transport =
        new MultiThreadIoEventLoopGroup(
            Runtime.getRuntime().availableProcessors(),
            new DefaultThreadFactory("grpc-transport", true),
            io);
    ConnectionLimit limit = new ConnectionLimit(maxConnections);
    NettyServerBuilder builder = NettyServerBuilder.forAddress(new InetSocketAddress(host, port));
    tracers.forEach(builder::addStreamTracerFactory);
    Server server =
        builder
            .bossEventLoopGroup(acceptor)
            .workerEventLoopGroup(transport)
            .channelFactory(
                () -> {
                  ServerChannel listening =
                      epoll ? new EpollServerSocketChannel() : new NioServerSocketChannel();
                  listening.pipeline().addFirst(limit);
                  return listening;
                })
            // handlers never block (anything slow goes to the worker pool), so they run on the
            // transport's thread instead of being handed to another executor first
            .directExecutor()
            .maxInboundMessageSize(maxMessageBytes)
            // a connection that has not sent its preface and settings by then is closed, as REST
            // closes one that has not sent its first headers
            .handshakeTimeout(handshakeTimeout.toNanos(), TimeUnit.NANOSECONDS)
            .maxConcurrentCallsPerConnection(MAX_CALLS_PER_CONNECTION)
            // a client that cancels calls faster than this is cut off (HTTP/2 "rapid reset")
            .maxRstFramesPerWindow(MAX_RESETS_PER_WINDOW, RESET_WINDOW_SECONDS)
            .maxConnectionIdle(MAX_CONNECTION_IDLE.toNanos(), TimeUnit.NANOSECONDS)
            // a client that stops reading does not answer the ping either: closed 20 s later
            .keepAliveTime(KEEPALIVE.toNanos(), TimeUnit.NANOSECONDS)
            // gzip and deflate messages, inflated within the message size limit as they are parsed
            .decompressorRegistry(GrpcCompression.DECOMPRESSORS)
            .compressorRegistry(GrpcCompression.COMPRESSORS)
            .addStreamTracerFactory(arrivals)
            // arrivals first (the last one listed sees a call first)
            .addService(
                ServerInterceptors.intercept(
                    LenientParsing.of(service.bindService(), offHeap),
                    LenientParsing.INVALID_MESSAGES,
                    authorize,
                    GrpcCompression.ANSWER_IN_KIND,
                    GrpcSharedMemory.PEER,
                    arrivals))
            .build();
    try {
      server.start();
    } catch (IOException | RuntimeException e) {
      acceptor.shutdownGracefully(0, 0, TimeUnit.SECONDS);
      transport.shutdownGracefully(0, 0, TimeUnit.SECONDS);
      throw e;
    }
    return new GrpcEndpoint(server, acceptor, transport);
  }

  /**
   * Stops accepting connections while {@code max} are open, as REST's connection limit does: more
   * wait in the listening socket's backlog. On the listening channel, whose event loop runs every
   * change of the count.
   */
  @ChannelHandler.Sharable
  private static final class ConnectionLimit extends ChannelInboundHandlerAdapter {
    private final int max;
    private int open; // on the listening channel's event loop only

    ConnectionLimit(int max) {
      this.max = max;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object accepted) {
      Channel listening = ctx.channel();
      if (++open >= max) {
        listening.config().setAutoRead(false);
      }
      ((Channel) accepted)
          .closeFuture()
          .addListener(
              closed ->
                  listening
                      .eventLoop()
                      .execute(
                          () -> {
                            if (--open < max) {
                              listening.config().setAutoRead(true);
                            }
                          }));
      ctx.fireChannelRead(accepted);
    }
  }

  /** The bound port. */
  public int port() {
    return server.getPort();
  }

  /** Stops accepting calls; calls in flight go on until {@link #awaitStopped}. */
  public void stopAccepting() {
    server.shutdown();
  }

  /** Waits up to {@code grace} for calls in flight, then cancels the rest. */
  public void awaitStopped(Duration grace) {
    try {
      if (!server.awaitTermination(grace.toNanos(), TimeUnit.NANOSECONDS)) {
        LOG.log(Level.WARNING, "gRPC calls were still running after {0}; cancelling them", grace);
        server.shutdownNow();
        server.awaitTermination(5, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      server.shutdownNow();
      Thread.currentThread().interrupt();
    } finally {
      acceptor.shutdownGracefully(0, 1, TimeUnit.SECONDS);
      transport.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }
  }

  /** The service implementation. */
  public static final class Service extends GRPCInferenceServiceGrpc.GRPCInferenceServiceImplBase {

    private final Engine engine;
    private final ModelControl control;
    private final RequestIds requestIds;
    private final GrpcSharedMemory shm;

    /** A service without shared memory: a region named by a request is unknown. */
    public Service(Engine engine, ModelControl control, RequestIds requestIds) {
      this(engine, control, requestIds, new SharedMemoryRegions(0));
    }

    public Service(
        Engine engine, ModelControl control, RequestIds requestIds, SharedMemoryRegions regions) {
      this.engine = engine;
      this.control = control;
      this.requestIds = requestIds;
      this.shm = new GrpcSharedMemory(regions);
    }

    @Override
    public void serverLive(ServerLiveRequest request, StreamObserver<ServerLiveResponse> out) {
      answer(out, ServerLiveResponse.newBuilder().setLive(true).build());
    }

    @Override
    public void serverReady(ServerReadyRequest request, StreamObserver<ServerReadyResponse> out) {
      answer(
          out,
          ServerReadyResponse.newBuilder()
              .setReady(engine.phase() == ServerState.Phase.READY)
              .build());
    }

    @Override
    public void serverMetadata(
        ServerMetadataRequest request, StreamObserver<ServerMetadataResponse> out) {
      answer(
          out,
          ServerMetadataResponse.newBuilder()
              .setName(Engine.SERVER_NAME)
              .setVersion(ServerVersion.get())
              .addAllExtensions(Engine.EXTENSIONS)
              .build());
    }

    @Override
    public void modelReady(ModelReadyRequest request, StreamObserver<ModelReadyResponse> out) {
      run(
          out,
          () ->
              ModelReadyResponse.newBuilder()
                  .setReady(engine.isReady(request.getName(), version(request.getVersion())))
                  .build());
    }

    @Override
    public void modelMetadata(
        ModelMetadataRequest request, StreamObserver<ModelMetadataResponse> out) {
      run(
          out,
          () -> {
            Engine.ModelInfo info =
                engine.modelInfo(request.getName(), version(request.getVersion()));
            ModelMetadata md = info.metadata();
            ModelMetadataResponse.Builder b =
                ModelMetadataResponse.newBuilder()
                    .setName(request.getName())
                    .addAllVersions(info.versions())
                    .setPlatform(md.platform());
            for (TensorSpec s : md.inputs()) {
              b.addInputs(spec(s));
            }
            for (TensorSpec s : md.outputs()) {
              b.addOutputs(spec(s));
            }
            return b.build();
          });
    }

    @Override
    public void modelConfig(ModelConfigRequest request, StreamObserver<ModelConfigResponse> out) {
      run(
          out,
          () -> {
            Engine.ServedConfig c =
                engine.modelConfig(request.getName(), version(request.getVersion()));
            return ModelConfigResponse.newBuilder()
                .setConfig(
                    TritonConfig.completed(
                        c.name(),
                        c.config(),
                        c.metadata(),
                        c.maxBatchSize(),
                        c.maxQueueDelayMicros(),
                        c.preferredBatchSizes(),
                        c.instances()))
                .build();
          });
    }

    @Override
    public void modelInfer(ModelInferRequest request, StreamObserver<ModelInferResponse> out) {
      // the message and the tensors decoded from it, in the same in-flight budget as REST bodies
      long bytes = inflightBytes(request);
      CompletableFuture<Void> admitted = engine.inflight().reserve(bytes);
      RequestTrace span = GrpcSpans.current();
      start(out, admitted, release(admitted, bytes), () -> infer(request, span));
    }

    @Override
    public StreamObserver<ModelInferRequest> modelStreamInfer(
        StreamObserver<ModelStreamInferResponse> out) {
      String streamId = requestIds.next();
      return InferStream.serve(
          out,
          request -> {
            long bytes = inflightBytes(request);
            CompletableFuture<Void> admitted = engine.inflight().reserve(bytes);
            AtomicReference<CompletableFuture<?>> running = new AtomicReference<>();
            CompletableFuture<ModelInferResponse> answer =
                admitted.thenCompose(
                    granted -> {
                      CompletableFuture<ModelInferResponse> f = infer(request, RequestTrace.NONE);
                      running.set(f);
                      return f;
                    });
            answer.whenComplete( // a cancelled stream withdraws the requests not yet run
                (r, t) -> {
                  CompletableFuture<?> f = running.get();
                  if (answer.isCancelled() && f != null) {
                    f.cancel(true);
                  }
                });
            return new InferStream.Started(answer, release(admitted, bytes));
          },
          failure -> GrpcErrors.toStatus(failure, streamId, engine.redaction()).getDescription());
    }

    /** The bytes {@code request} holds while it is served: its message and decoded tensors. */
    private static long inflightBytes(ModelInferRequest request) {
      return 2L * request.getSerializedSize()
          + GrpcTensors.stringOverhead(request)
          + GrpcSharedMemory.inputBytes(request);
    }

    /** Returns {@code bytes} to the budget once {@code admitted} has granted them. */
    private Runnable release(CompletableFuture<Void> admitted, long bytes) {
      return () ->
          admitted.whenComplete(
              (granted, refused) -> {
                if (refused == null) {
                  engine.inflight().release(bytes);
                }
              });
    }

    /** Runs an admitted request and encodes its answer; cancelling the future withdraws it. */
    private CompletableFuture<ModelInferResponse> infer(
        ModelInferRequest request, RequestTrace span) {
      String name = request.getModelName();
      String version = version(request.getModelVersion());
      ModelTarget target = engine.resolveWithoutReading(name, version);
      if (target == null) { // resolving reads the repository: not on this thread
        return engine
            .workers()
            .call(() -> encode(engine.infer(name, version, decode(request, span)), span));
      }
      // decoded here and queued on the model's executor, or run here when it can run at once and
      // its runs are quick
      CompletableFuture<InferenceService.Result> started =
          engine.infer(
              name,
              target,
              decode(request, span),
              System.nanoTime() + engine.workers().timeout().toNanos(),
              QUICK_RUN_NANOS);
      CompletableFuture<ModelInferResponse> encoded = started.thenApply(r -> encode(r, span));
      encoded.whenComplete((r, t) -> started.cancel(false)); // withdraws a cancelled call
      return engine.workers().withinTimeout(encoded);
    }

    /** The request, traced in {@code span} when it records. */
    private InferRequest decode(ModelInferRequest request, RequestTrace span) {
      InferRequest decoded = GrpcTensors.decode(request, shm.regions());
      return span.recording() ? decoded.traced(span) : decoded;
    }

    /** The answer, its encoding recorded in {@code span} when it records. */
    private ModelInferResponse encode(InferenceService.Result result, RequestTrace span) {
      return span.recording()
          ? span.measure("encode", () -> GrpcTensors.encode(result, shm.regions()))
          : GrpcTensors.encode(result, shm.regions());
    }

    @Override
    public void systemSharedMemoryStatus(
        SystemSharedMemoryStatusRequest request,
        StreamObserver<SystemSharedMemoryStatusResponse> out) {
      run(out, () -> shm.status(request.getName()));
    }

    @Override
    public void systemSharedMemoryRegister(
        SystemSharedMemoryRegisterRequest request,
        StreamObserver<SystemSharedMemoryRegisterResponse> out) {
      InetAddress peer = GrpcSharedMemory.peer(); // from the call's context, on its thread
      run(
          out,
          () -> {
            shm.register(request, peer);
            return SystemSharedMemoryRegisterResponse.getDefaultInstance();
          });
    }

    @Override
    public void systemSharedMemoryUnregister(
        SystemSharedMemoryUnregisterRequest request,
        StreamObserver<SystemSharedMemoryUnregisterResponse> out) {
      run(
          out,
          () -> {
            shm.unregister(request.getName());
            return SystemSharedMemoryUnregisterResponse.getDefaultInstance();
          });
    }

    @Override
    public void cudaSharedMemoryStatus(
        CudaSharedMemoryStatusRequest request, StreamObserver<CudaSharedMemoryStatusResponse> out) {
      answer(out, CudaSharedMemoryStatusResponse.getDefaultInstance());
    }

    @Override
    public void cudaSharedMemoryRegister(
        CudaSharedMemoryRegisterRequest request,
        StreamObserver<CudaSharedMemoryRegisterResponse> out) {
      run(
          out,
          () -> {
            throw SharedMemoryException.cudaUnsupported();
          });
    }

    @Override
    public void cudaSharedMemoryUnregister(
        CudaSharedMemoryUnregisterRequest request,
        StreamObserver<CudaSharedMemoryUnregisterResponse> out) {
      answer(out, CudaSharedMemoryUnregisterResponse.getDefaultInstance()); // none registered
    }

    @Override
    public void modelStatistics(
        ModelStatisticsRequest request, StreamObserver<ModelStatisticsResponse> out) {
      run(
          out,
          () ->
              GrpcStatistics.response(
                  engine.statistics(
                      request.getName().isEmpty() ? null : request.getName(),
                      version(request.getVersion()))));
    }

    @Override
    public void repositoryIndex(
        RepositoryIndexRequest request, StreamObserver<RepositoryIndexResponse> out) {
      run(
          out,
          () -> {
            RepositoryIndexResponse.Builder b = RepositoryIndexResponse.newBuilder();
            for (Engine.IndexRow r : engine.index(request.getReady())) {
              b.addModelsBuilder()
                  .setName(r.name())
                  .setVersion(r.version())
                  .setState(r.state())
                  .setReason(r.reason());
            }
            return b.build();
          });
    }

    @Override
    public void repositoryModelLoad(
        RepositoryModelLoadRequest request, StreamObserver<RepositoryModelLoadResponse> out) {
      run(
          out,
          () -> {
            Map<String, Object> parameters = new LinkedHashMap<>();
            request.getParametersMap().forEach((k, v) -> parameters.put(k, GrpcTensors.value(v)));
            control.load(request.getModelName(), ModelControl.Load.of(parameters));
            return RepositoryModelLoadResponse.getDefaultInstance();
          });
    }

    @Override
    public void repositoryModelUnload(
        RepositoryModelUnloadRequest request, StreamObserver<RepositoryModelUnloadResponse> out) {
      run(
          out,
          () -> {
            boolean dependents = false;
            for (Map.Entry<String, ModelRepositoryParameter> p :
                request.getParametersMap().entrySet()) {
              if (!p.getKey().equals(ModelControl.UNLOAD_DEPENDENTS)
                  || p.getValue().getParameterChoiceCase()
                      != ModelRepositoryParameter.ParameterChoiceCase.BOOL_PARAM) {
                throw new BadRequestException(
                    "an unload takes one parameter, '"
                        + ModelControl.UNLOAD_DEPENDENTS
                        + "' (bool_param); not '"
                        + p.getKey()
                        + "'");
              }
              dependents = p.getValue().getBoolParam();
            }
            control.unload(request.getModelName(), dependents);
            return RepositoryModelUnloadResponse.getDefaultInstance();
          });
    }

    private static String version(String v) {
      return v.isEmpty() ? null : v;
    }

    private static ModelMetadataResponse.TensorMetadata spec(TensorSpec s) {
      return ModelMetadataResponse.TensorMetadata.newBuilder()
          .setName(s.name())
          .setDatatype(s.datatype().oipName())
          .addAllShape(s.shape())
          .build();
    }

    private static <T> void answer(StreamObserver<T> out, T response) {
      out.onNext(response);
      out.onCompleted();
    }

    /**
     * Runs {@code action} on a worker and answers with its result or mapped failure; a cancelled
     * call (client gone, deadline passed) interrupts the action.
     */
    private <T> void run(StreamObserver<T> out, Callable<T> action) {
      start(
          out,
          CompletableFuture.completedFuture(null),
          () -> {},
          () -> engine.workers().call(action));
    }

    /**
     * Answers with the result or mapped failure of the future that {@code action} starts once
     * {@code admitted} completes (on the thread that completes it, without holding one while it
     * waits); a cancelled call cancels that future; {@code done} runs once the answer has been sent
     * or the call is abandoned.
     */
    private <T> void start(
        StreamObserver<T> out,
        CompletableFuture<?> admitted,
        Runnable done,
        Supplier<CompletableFuture<T>> action) {
      String requestId = requestIds.next();
      ServerCallStreamObserver<T> call = (ServerCallStreamObserver<T>) out;
      AtomicReference<CompletableFuture<T>> running = new AtomicReference<>();
      CompletableFuture<T> outcome =
          admitted.thenCompose(
              ignored -> {
                CompletableFuture<T> f = action.get();
                running.set(f);
                return f;
              });
      // the budget (done) is held until the answer has left or the call is gone: a client that
      // stops reading its answers holds its requests' bytes, not memory the budget never counted
      AtomicBoolean finished = new AtomicBoolean();
      Runnable finish =
          () -> {
            if (finished.compareAndSet(false, true)) {
              done.run();
            }
          };
      call.setOnCloseHandler(finish);
      call.setOnCancelHandler(
          () -> {
            LOG.log(
                Level.DEBUG,
                "gRPC call {0}: the client left or cancelled it, or its deadline passed",
                requestId);
            finish.run();
            outcome.cancel(true);
            CompletableFuture<T> f = running.get();
            if (f != null) {
              f.cancel(true);
            }
          });
      outcome.whenComplete(
          (result, failure) -> {
            if (call.isCancelled()) {
              return;
            }
            try {
              if (failure == null) {
                call.onNext(result);
                call.onCompleted();
              } else {
                Status status = GrpcErrors.toStatus(failure, requestId, engine.redaction());
                call.onError(status.asRuntimeException());
              }
            } catch (RuntimeException e) { // cancelled meanwhile: its handler logged it
              LOG.log(Level.DEBUG, "gRPC call {0} ended before its answer", requestId);
            }
          });
    }
  }
}
