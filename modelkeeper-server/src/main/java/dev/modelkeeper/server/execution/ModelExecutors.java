package dev.modelkeeper.server.execution;

import dev.modelkeeper.core.ModelLease;
import dev.modelkeeper.core.ModelManager;
import dev.modelkeeper.core.Ticker;
import dev.modelkeeper.onnx.InferenceModel;
import dev.modelkeeper.onnx.Tensor;
import dev.modelkeeper.server.request.ModelTarget;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * Per-model execution for the server: one {@link ModelExecutor} per resolved model identifier,
 * created on its first request, each with its own queue, concurrency limit and batching, so a slow
 * model's backlog is answered 503 from its own queue while other models keep running. Thread-safe.
 *
 * <p>Runs execute on one shared pool that grows a thread per concurrent run and retires idle ones:
 * each model holds at most its {@code max_concurrency} threads, so a stalled model cannot take the
 * threads of another. Each run leases its model from the {@link ModelManager} for its whole
 * duration. Executors are kept per identifier the resolver accepted, so their number is bounded by
 * the repository and the alias table.
 */
public final class ModelExecutors {

  private static final AtomicInteger POOLS = new AtomicInteger();

  private final ExecutionSettings defaults;
  private final ModelExecutor.ModelAccess access;
  private final ExecutorService runs;
  private final ModelExecutor.Timer timer;
  private final Runnable closeTimer;
  private final Ticker ticker;
  private final ExecutionListener.Factory listeners;
  private final Map<String, ModelExecutor> executors = new ConcurrentHashMap<>();

  /** The server's executors: runs lease from {@code manager}; threads and timer of their own. */
  public static ModelExecutors create(
      ModelManager manager, ExecutionSettings defaults, ExecutionListener.Factory listeners) {
    int pool = POOLS.incrementAndGet();
    AtomicInteger ids = new AtomicInteger();
    ThreadPoolExecutor runs =
        new ThreadPoolExecutor(
            0,
            Integer.MAX_VALUE, // bounded by the sum of the models' max_concurrency
            30,
            TimeUnit.SECONDS,
            new SynchronousQueue<>(),
            r -> daemon(r, "modelkeeper-model-" + pool + "-" + ids.incrementAndGet()));
    ScheduledThreadPoolExecutor timer =
        new ScheduledThreadPoolExecutor(1, r -> daemon(r, "modelkeeper-batch-timer-" + pool));
    timer.setRemoveOnCancelPolicy(true);
    return new ModelExecutors(
        defaults,
        leasing(manager),
        runs,
        (task, delayNanos) -> timer.schedule(task, delayNanos, TimeUnit.NANOSECONDS),
        timer::shutdownNow,
        Ticker.system(),
        listeners);
  }

  /** Access that leases the model from {@code manager} for the whole of each run. */
  static ModelExecutor.ModelAccess leasing(ModelManager manager) {
    return new ModelExecutor.ModelAccess() {
      @Override
      public void withModel(ModelTarget target, Consumer<InferenceModel> work) {
        try (ModelLease lease = manager.acquire(target.modelId(), null, target.alias())) {
          work.accept(inferenceModel(lease));
        }
      }

      @Override
      public boolean withModelIfResident(ModelTarget target, Consumer<InferenceModel> work) {
        // starts no load: a model that must load is loaded by a run on the model's executor (one
        // evicted between this check and the lease is loaded here, the rare exception)
        if (!manager.contains(target.key())) { // an alias is resident under the alias
          return false;
        }
        withModel(target, work);
        return true;
      }

      @Override
      public boolean resident(ModelTarget target) {
        return manager.contains(target.key());
      }
    };
  }

  ModelExecutors(
      ExecutionSettings defaults,
      ModelExecutor.ModelAccess access,
      ExecutorService runs,
      ModelExecutor.Timer timer,
      Runnable closeTimer,
      Ticker ticker,
      ExecutionListener.Factory listeners) {
    this.defaults = defaults;
    this.access = access;
    this.runs = runs;
    this.timer = timer;
    this.closeTimer = closeTimer;
    this.ticker = ticker;
    this.listeners = listeners;
  }

  /**
   * Queues an inference of {@code target} on its model's executor, or runs it on this thread when
   * it can run at once and its model's runs typically take at most {@code runHereUpToNanos}; see
   * {@link ModelExecutor#submit}. {@code deadline} is a {@link Ticker} instant.
   */
  CompletableFuture<Map<String, Tensor>> infer(
      ModelTarget target,
      Map<String, Tensor> inputs,
      Set<String> outputs,
      long deadline,
      long runHereUpToNanos) {
    return executor(target.key()).submit(target, inputs, outputs, deadline, runHereUpToNanos);
  }

  /** This as the inference path's queued execution (deadlines are {@link System#nanoTime()}). */
  public Execution execution() {
    return (target, request, deadline, runHereUpToNanos) -> {
      CompletableFuture<Map<String, Tensor>> run =
          executor(target.key())
              .submit(
                  target,
                  request.inputs(),
                  request.outputs(),
                  deadline,
                  runHereUpToNanos,
                  request.trace());
      CompletableFuture<Outcome> outcome =
          run.thenApply(outputs -> new Outcome(target.version(), outputs));
      outcome.whenComplete((r, t) -> run.cancel(false)); // withdraws it when the caller cancels
      return outcome;
    };
  }

  /** The executor of {@code key}, created with the server defaults on first use. */
  ModelExecutor executor(String key) {
    return executors.computeIfAbsent(
        key,
        k ->
            new ModelExecutor(
                k,
                defaults,
                this::settingsOf,
                access,
                runs,
                timer,
                ticker,
                listeners.forModel(k, () -> queued(k))));
  }

  private int queued(String key) {
    ModelExecutor e = executors.get(key);
    return e == null ? 0 : e.queued();
  }

  private ExecutionSettings settingsOf(InferenceModel model) {
    return defaults.overriddenBy(model.config().execution());
  }

  /**
   * Refuses new inferences, lets queued and running ones finish for up to {@code grace}, then stops
   * the threads. True when everything finished in time.
   */
  public boolean shutdown(Duration grace) {
    long deadline = ticker.read() + grace.toNanos();
    boolean clean = true;
    for (ModelExecutor e : executors.values()) {
      clean &= e.shutdown(deadline);
    }
    closeTimer.run();
    runs.shutdown();
    try {
      long left = Math.max(0, deadline - ticker.read());
      clean &= runs.awaitTermination(left, TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      clean = false;
    }
    runs.shutdownNow();
    return clean;
  }

  private static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }

  /** The leased model as an {@link InferenceModel}. */
  public static InferenceModel inferenceModel(ModelLease lease) {
    if (!(lease.model() instanceof InferenceModel)) {
      throw new IllegalStateException(
          "model '"
              + lease.modelId()
              + "' is a "
              + lease.model().getClass().getName()
              + ", which cannot run inference");
    }
    return (InferenceModel) lease.model();
  }
}
