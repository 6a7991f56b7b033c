package dev.modelkeeper.server.execution;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.modelkeeper.core.StepBackException;
import dev.modelkeeper.core.Ticker;
import dev.modelkeeper.onnx.Datatype;
import dev.modelkeeper.onnx.InferenceException;
import dev.modelkeeper.onnx.InferenceModel;
import dev.modelkeeper.onnx.InvalidInputException;
import dev.modelkeeper.onnx.RunPhases;
import dev.modelkeeper.onnx.Tensor;
import dev.modelkeeper.server.errors.UnavailableException;
import dev.modelkeeper.server.request.ModelTarget;
import dev.modelkeeper.server.request.RequestTrace;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Runs the inferences of one model: a bounded queue, at most {@link
 * ExecutionSettings#maxConcurrency()} runs at once, and dynamic batching. Thread-safe.
 *
 * <p><b>Design.</b> {@link #submit} queues a call and returns its future at once; nothing blocks
 * the caller. A dispatch step, run under {@link #lock} whenever a call arrives, a run ends or the
 * delay timer fires, starts runs while fewer than {@code maxConcurrency} are running. A run takes
 * the oldest live call and, when the model is batchable, every later queued call with the same
 * {@link Batches#joinKey} while the rows fit {@code maxBatchSize}; it starts when the batch is full
 * or has a preferred size, or once the oldest call has waited {@code maxQueueDelay}, or at the
 * earliest deadline among its calls, whichever comes first; otherwise the timer is armed for that
 * instant. Runs execute on the injected {@link Executor}, under one lease taken by {@link
 * ModelAccess} for the whole run (the model cannot be evicted or unloaded mid-batch); except that a
 * run of just the call being submitted, on a resident model, runs on the submitting thread when its
 * caller allows it (it holds one of the {@code maxConcurrency} slots like any run): a thread
 * hand-off costs more than a small model's whole run. For the same reason a model thread whose run
 * ends with more work queued keeps the next run for itself and starts it once it has answered its
 * calls, when those answers are small enough to be written without waiting for their clients; so a
 * busy model's runs follow one another on the threads already running them.
 *
 * <p><b>Invariants.</b> Every call's future completes exactly once (result, failure, expiry,
 * rejection or cancellation by its caller). A call whose deadline passes while queued is failed 503
 * and never runs (a queued call past its deadline is failed at the next dispatch); a batch never
 * waits past the earliest deadline of its calls. A cancelled call is dropped from the queue, or its
 * share of a running batch is discarded; the other calls are untouched. When a batched run fails on
 * bad input or its outputs cannot be split by rows, each call of the batch is run alone under the
 * same lease, so one bad request fails only itself. {@code running} counts runs handed to the
 * executor and not yet finished, so at most {@code maxConcurrency} run at once.
 *
 * <p><b>Locking.</b> One lock per model, never held while running a model, completing a future,
 * arming the timer or handing work to the executor: dispatch collects that work under the lock and
 * does it after unlocking. A run answers its calls only after it has given its slot back, so the
 * callers' follow-up work (encoding, writing responses) never holds up the model's next run.
 *
 * <p><b>Waits, in order.</b> A run waits for three things, always in this order and never for an
 * earlier one while holding a later one: its model's lease (which may wait for the model to load,
 * and the load for room in the budget: the loading thread holds no lease), then working memory in
 * the budget (holding the lease), then the memory meter's quiet window if a load is being measured
 * (holding both, for at most a few seconds; the measured load waits for nothing a run holds). Only
 * the second can form a cycle, two runs each holding the lease of a model the other's room needs;
 * the budget lets one run wait holding its lease and makes any other step back ({@link
 * dev.modelkeeper.core.StepBackException}): the run closes its lease, waits with nothing held until
 * the waiting run is served, and takes the lease again, its calls still queued on their deadlines.
 * So no set of runs and loads can wait on one another; a wait lasts until room comes or the
 * capacity timeout, never longer.
 */
final class ModelExecutor {

  /** Runs work with the model leased for the whole call; the lease is released when it returns. */
  @FunctionalInterface
  interface ModelAccess {
    void withModel(ModelTarget target, Consumer<InferenceModel> work);

    /**
     * As {@link #withModel} when the model is resident; returns false, having run nothing and
     * started no load, when it is not. The default never leases.
     */
    default boolean withModelIfResident(ModelTarget target, Consumer<InferenceModel> work) {
      return false;
    }

    /** Whether a lease of the model would find it loaded (asked only for traced runs). */
    default boolean resident(ModelTarget target) {
      return true;
    }
  }

  /** Schedules a task after a delay; a task may run late, never early. Must be thread-safe. */
  @FunctionalInterface
  interface Timer {
    void schedule(Runnable task, long delayNanos);
  }

  private static final Duration RETRY_AFTER = Duration.ofSeconds(1);
  private static final long NOT_ARMED = Long.MAX_VALUE;

  /**
   * The most output elements a thread answers before running a kept run: their JSON fits the
   * transport's output buffer, so writing it never waits for the client.
   */
  private static final long SMALL_ANSWER = 1024;

  private final String key;
  private final ModelAccess access;
  private final Executor executor;
  private final Timer timer;
  private final Ticker ticker;
  private final ExecutionListener metrics;
  private final Function<InferenceModel, ExecutionSettings> settingsOf;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition idle = lock.newCondition();

  @GuardedBy("lock")
  private final ArrayDeque<Call> queue = new ArrayDeque<>();

  @GuardedBy("lock")
  private int running;

  /** The instant the armed timer fires, NOT_ARMED when none is. */
  @GuardedBy("lock")
  private long armedAt = NOT_ARMED;

  @GuardedBy("lock")
  private boolean closed;

  /** The settings in force and the model instance they were read from (null before a run). */
  private volatile Plan plan;

  /**
   * How long a run of this model typically takes: a moving average over recent runs, {@link
   * Long#MAX_VALUE} before the first. Updated without a lock (a lost update only slows the
   * average).
   */
  private volatile long typicalRunNanos = Long.MAX_VALUE;

  private record Plan(InferenceModel model, ExecutionSettings settings) {}

  /**
   * @param key the model's resolved identifier, for messages
   * @param initial the settings until a run has leased the model (batching is off until then, since
   *     whether the model can batch is known only from its metadata)
   * @param settingsOf the settings of a leased model (read again whenever the instance changes)
   */
  ModelExecutor(
      String key,
      ExecutionSettings initial,
      Function<InferenceModel, ExecutionSettings> settingsOf,
      ModelAccess access,
      Executor executor,
      Timer timer,
      Ticker ticker,
      ExecutionListener metrics) {
    this.key = key;
    this.plan = new Plan(null, initial.unbatched());
    this.settingsOf = settingsOf;
    this.access = access;
    this.executor = executor;
    this.timer = timer;
    this.ticker = ticker;
    this.metrics = metrics;
  }

  /**
   * Queues one inference. The future completes with its outputs or fails: {@link
   * UnavailableException} when the queue is full, the server is stopping, or {@code deadline} (a
   * {@link Ticker} instant) passes first; the model's own exceptions otherwise. Cancelling the
   * future withdraws the call. Never blocks, except that a call that can run at once and alone on a
   * resident model whose runs typically take at most {@code runHereUpToNanos} runs on the calling
   * thread, and the future is complete on return (the caller then waits for the model's run, never
   * for a slot, a batch or a load). {@link Execution#ANY_RUN} accepts any run, {@link
   * Execution#NO_RUN} none.
   */
  CompletableFuture<Map<String, Tensor>> submit(
      ModelTarget target,
      Map<String, Tensor> inputs,
      Set<String> outputs,
      long deadline,
      long runHereUpToNanos) {
    return submit(target, inputs, outputs, deadline, runHereUpToNanos, RequestTrace.NONE);
  }

  /** As {@link #submit}, recording the call's queue wait, load and run in {@code span}. */
  CompletableFuture<Map<String, Tensor>> submit(
      ModelTarget target,
      Map<String, Tensor> inputs,
      Set<String> outputs,
      long deadline,
      long runHereUpToNanos,
      RequestTrace span) {
    long now = ticker.read();
    Call call =
        new Call(
            target,
            inputs,
            outputs,
            Batches.rows(inputs),
            Batches.joinKey(target.modelId(), inputs, outputs),
            now,
            deadline,
            span);
    Work work = new Work();
    work.caller = runHereUpToNanos >= typicalRunNanos ? call : null;
    lock.lock();
    try {
      ExecutionSettings s = plan.settings();
      if (closed) {
        call.result.completeExceptionally(
            new UnavailableException("the server is shutting down", RETRY_AFTER));
        return call.result;
      }
      if (queue.size() >= s.maxQueueSize()) {
        work.rejected = true;
        call.result.completeExceptionally(
            new UnavailableException(
                "model '"
                    + key
                    + "' is busy: "
                    + queue.size()
                    + " requests queued (the most it"
                    + " queues) and "
                    + running
                    + " runs of at most "
                    + s.maxConcurrency()
                    + " in progress",
                RETRY_AFTER));
      } else {
        queue.addLast(call);
        dispatch(now, work);
      }
    } finally {
      lock.unlock();
    }
    call.result.whenComplete(
        (r, t) -> {
          if (call.result.isCancelled()) {
            withdraw(call);
          }
        });
    work.perform();
    return call.result;
  }

  /** Requests queued now. */
  int queued() {
    lock.lock();
    try {
      return queue.size();
    } finally {
      lock.unlock();
    }
  }

  /** The settings in force. */
  ExecutionSettings settings() {
    return plan.settings();
  }

  /**
   * Refuses new calls, lets queued and running ones finish until {@code deadline} (a {@link Ticker}
   * instant), then fails what is still queued. True when everything finished in time.
   */
  boolean shutdown(long deadline) {
    List<Call> dropped;
    lock.lock();
    try {
      closed = true;
      while (running > 0 || !queue.isEmpty()) {
        long left = deadline - ticker.read();
        if (left <= 0) {
          break;
        }
        try {
          idle.awaitNanos(left);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          break;
        }
      }
      dropped = new ArrayList<>(queue);
      queue.clear();
    } finally {
      lock.unlock();
    }
    for (Call c : dropped) {
      c.result.completeExceptionally(
          new UnavailableException("the server is shutting down", RETRY_AFTER));
    }
    return dropped.isEmpty() && running() == 0;
  }

  private int running() {
    lock.lock();
    try {
      return running;
    } finally {
      lock.unlock();
    }
  }

  private void onTimer() {
    Work work = new Work();
    lock.lock();
    try {
      armedAt = NOT_ARMED;
      dispatch(ticker.read(), work);
    } finally {
      lock.unlock();
    }
    work.perform();
  }

  private void withdraw(Call call) {
    lock.lock();
    try {
      queue.remove(call);
      signalIfIdle();
    } finally {
      lock.unlock();
    }
  }

  /**
   * Starts every run the settings allow now; records what to do after unlocking in {@code work}.
   */
  @GuardedBy("lock")
  private void dispatch(long now, Work work) {
    ExecutionSettings s = plan.settings();
    while (running < s.maxConcurrency() && !queue.isEmpty()) {
      Call head = queue.peekFirst();
      if (head.result.isDone()) {
        queue.pollFirst();
        continue;
      }
      if (head.deadline - now < 0) {
        work.expired.add(queue.pollFirst());
        continue;
      }
      List<Call> batch = new ArrayList<>();
      batch.add(head);
      if (s.maxBatchSize() > 1 && head.rows > 0 && head.rows < s.maxBatchSize()) {
        int rows = head.rows;
        long startAt = Math.min(head.enqueued + s.maxQueueDelayNanos(), head.deadline);
        for (Iterator<Call> it = queue.iterator(); it.hasNext() && rows < s.maxBatchSize(); ) {
          Call c = it.next();
          if (c == head || c.result.isDone()) {
            continue;
          }
          if (c.deadline - now < 0) {
            it.remove();
            work.expired.add(c);
          } else if (c.rows > 0
              && c.joinKey.equals(head.joinKey)
              && rows + c.rows <= s.maxBatchSize()) {
            batch.add(c);
            rows += c.rows;
            startAt = Math.min(startAt, c.deadline);
          }
        }
        boolean ready = rows >= s.maxBatchSize() || s.preferredBatchSizes().contains(rows);
        if (!ready && now - startAt < 0) {
          if (startAt < armedAt) {
            armedAt = startAt;
            work.timerDelay = startAt - now;
          }
          return;
        }
      }
      Set<Call> taken = Collections.newSetFromMap(new IdentityHashMap<>());
      taken.addAll(batch);
      queue.removeIf(taken::contains);
      running++;
      work.runs.add(batch);
    }
    signalIfIdle();
  }

  @GuardedBy("lock")
  private void signalIfIdle() {
    if (running == 0 && queue.isEmpty()) {
      idle.signalAll();
    }
  }

  /**
   * Runs {@code batch} in the slot dispatch took for it, then gives the slot back and answers the
   * calls. With {@code onlyIfResident}, runs only when the model can be leased without waiting and
   * otherwise returns false having done nothing (the slot is still taken).
   */
  private boolean run(List<Call> batch, boolean onlyIfResident) {
    return run(batch, onlyIfResident, new Work());
  }

  /**
   * As {@link #run(List, boolean)}, dispatching into {@code after} when the slot is given back:
   * with {@link Work#mayKeep}, a run that dispatch starts is left in {@link Work#kept} for this
   * thread when the answers it writes first are small.
   */
  private boolean run(List<Call> batch, boolean onlyIfResident, Work after) {
    long start = ticker.read();
    List<Runnable> answers = new ArrayList<>(batch.size());
    boolean ran = true;
    try {
      List<Call> live = new ArrayList<>(batch.size());
      for (Call c : batch) {
        if (!c.result.isDone()) {
          live.add(c);
        }
      }
      if (!live.isEmpty()) {
        Consumer<InferenceModel> work = model -> execute(model, live, answers, after);
        boolean traced = traced(live);
        boolean loads = false;
        long[] leased = null;
        if (traced) { // notes whether the lease has to wait for a load, and when the lease came
          loads = !onlyIfResident && !access.resident(live.get(0).target);
          long[] at = {start};
          Consumer<InferenceModel> run = work;
          work =
              model -> {
                at[0] = ticker.read();
                run.accept(model);
              };
          leased = at;
        }
        for (boolean first = true; ; first = false) {
          try {
            if (onlyIfResident && first) {
              ran = access.withModelIfResident(live.get(0).target, work);
            } else {
              access.withModel(live.get(0).target, work);
            }
            break;
          } catch (StepBackException back) {
            // another run waits for working memory holding its lease: this one's lease is closed
            // now, so its model may be evicted for that run; it waits holding nothing, then tries
            // again (calls answered before it stepped back keep their answers)
            live.removeIf(c -> c.outcome != Call.PENDING || c.result.isDone());
            if (live.isEmpty()) {
              break;
            }
            back.awaitRoom(earliestDeadline(live) - ticker.read());
          }
        }
        if (ran && traced) {
          for (Call c : live) {
            c.span.step("queue", c.enqueued, start);
            if (loads) {
              c.span.step("load", start, leased[0]);
            }
          }
        }
      }
      if (ran) {
        for (Call c : batch) {
          metrics.waited(start - c.enqueued);
        }
      }
    } catch (Throwable t) {
      answers.clear();
      for (Call c : batch) {
        c.outcome = Call.FAILED;
        answers.add(() -> c.result.completeExceptionally(t));
      }
      if (t instanceof Error) {
        throw (Error) t;
      }
    } finally {
      if (ran) {
        long done = ticker.read();
        lock.lock();
        try {
          running--;
          dispatch(done, after);
        } finally {
          lock.unlock();
        }
        for (Call c : batch) {
          if (c.outcome != Call.PENDING) {
            metrics.ended(c.outcome == Call.ANSWERED, done - c.enqueued, done);
          }
        }
        after.perform();
        // answered after the slot is free: the callers' encoding and writing (which runs in the
        // completion) overlaps the next run instead of delaying it
        answers.forEach(Runnable::run);
      }
    }
    return ran;
  }

  /**
   * Runs {@code calls} on the leased {@code model}, merged when there are several, else alone, and
   * adds how to answer each call to {@code answers}.
   */
  private void execute(InferenceModel model, List<Call> calls, List<Runnable> answers, Work after) {
    if (plan.model() != model) { // first run, or the model was loaded again
      ExecutionSettings s = settingsOf.apply(model);
      plan = new Plan(model, Batches.batchable(model) ? s : s.unbatched());
    }
    if (calls.size() == 1) {
      runAlone(model, calls.get(0), answers, after);
      return;
    }
    int[] rows = new int[calls.size()];
    List<Map<String, Tensor>> inputs = new ArrayList<>(calls.size());
    for (int i = 0; i < rows.length; i++) {
      rows[i] = calls.get(i).rows;
      inputs.add(calls.get(i).inputs);
    }
    List<Map<String, Tensor>> parts = null;
    RunPhases phases = new RunPhases();
    long start = ticker.read();
    try {
      parts =
          model.takesRequestsTogether()
              ? model.inferEach(inputs, calls.get(0).outputs)
              : Batches.split(
                  model.infer(Batches.concat(inputs), calls.get(0).outputs, phases), rows);
    } catch (InvalidInputException | InferenceException e) {
      // one of the calls is bad: below, each runs alone and only the bad ones fail
    }
    if (parts == null) {
      for (Call c : calls) {
        runAlone(model, c, answers, after);
      }
      return;
    }
    long end = ticker.read();
    ran(calls.size(), sum(rows), start, phases, end);
    traceRun(calls, sum(rows), start, end, true);
    for (int i = 0; i < rows.length; i++) {
      Call c = calls.get(i);
      c.outcome = Call.ANSWERED;
      Map<String, Tensor> out = parts.get(i);
      after.answering(out);
      answers.add(() -> c.result.complete(out));
    }
  }

  private void runAlone(InferenceModel model, Call c, List<Runnable> answers, Work after) {
    if (c.result.isDone()) {
      return;
    }
    RunPhases phases = new RunPhases();
    long start = ticker.read();
    try {
      Map<String, Tensor> out = model.infer(c.inputs, c.outputs, phases);
      long end = ticker.read();
      c.outcome = Call.ANSWERED;
      ran(1, Math.max(c.rows, 1), start, phases, end);
      if (c.span.recording()) {
        traceRun(List.of(c), Math.max(c.rows, 1), start, end, true);
      }
      after.answering(out);
      answers.add(() -> c.result.complete(out));
    } catch (StepBackException e) {
      throw e; // the whole run steps back and tries again
    } catch (RuntimeException e) {
      c.outcome = Call.FAILED;
      if (c.span.recording()) {
        traceRun(List.of(c), Math.max(c.rows, 1), start, ticker.read(), false);
      }
      answers.add(() -> c.result.completeExceptionally(e));
    }
  }

  private static long earliestDeadline(List<Call> calls) {
    long earliest = Long.MAX_VALUE;
    for (Call c : calls) {
      earliest = Math.min(earliest, c.deadline);
    }
    return earliest;
  }

  private static boolean traced(List<Call> calls) {
    for (Call c : calls) {
      if (c.span.recording()) {
        return true;
      }
    }
    return false;
  }

  /** Records one run of {@code calls} ({@code rows} rows in all) in each call's trace. */
  private void traceRun(List<Call> calls, int rows, long start, long end, boolean ok) {
    for (Call c : calls) {
      c.span.run(key, calls.size(), rows, ok, start, end);
    }
  }

  /**
   * Reports a run from {@code start} to {@code end} (ticker instants), split where the model noted
   * its {@code phases}; a model that noted none ran for the whole of it.
   */
  private void ran(int requests, int rows, long start, RunPhases phases, long end) {
    long runNanos = end - start;
    long typical = typicalRunNanos;
    typicalRunNanos = typical == Long.MAX_VALUE ? runNanos : typical + (runNanos - typical) / 8;
    long ready = phases.inputsReadyAt();
    long ended = phases.runEndedAt();
    if (ready - start >= 0 && ended - ready >= 0 && end - ended >= 0 && ready != 0) {
      metrics.ran(requests, rows, ready - start, ended - ready, end - ended);
    } else {
      metrics.ran(requests, rows, 0, runNanos, 0);
    }
  }

  private static int sum(int[] values) {
    int s = 0;
    for (int v : values) {
      s += v;
    }
    return s;
  }

  /** One queued inference. */
  private static final class Call {
    final ModelTarget target;
    final Map<String, Tensor> inputs;
    final Set<String> outputs;
    final int rows; // the shared first dimension, -1 when the call cannot join a batch
    final String joinKey;
    final long enqueued;
    final long deadline;
    final RequestTrace span;
    final CompletableFuture<Map<String, Tensor>> result = new CompletableFuture<>();

    static final byte PENDING = 0;
    static final byte ANSWERED = 1;
    static final byte FAILED = 2;

    /** How its run ended: set and read by the thread that runs it. */
    byte outcome = PENDING;

    Call(
        ModelTarget target,
        Map<String, Tensor> inputs,
        Set<String> outputs,
        int rows,
        String joinKey,
        long enqueued,
        long deadline,
        RequestTrace span) {
      this.target = target;
      this.inputs = inputs;
      this.outputs = outputs;
      this.rows = rows;
      this.joinKey = joinKey;
      this.enqueued = enqueued;
      this.deadline = deadline;
      this.span = span;
    }
  }

  /** What a dispatch decided under the lock, done after unlocking. */
  private final class Work {
    final List<List<Call>> runs = new ArrayList<>();
    final List<Call> expired = new ArrayList<>();
    long timerDelay = -1;
    boolean rejected;

    /** The call being submitted on this thread; a run of it alone may run here. */
    Call caller;

    /** Whether this thread may keep one dispatched run for itself (a model thread). */
    boolean mayKeep;

    /** The run this thread keeps, started after it has answered its calls; null when none. */
    List<Call> kept;

    /** Output elements this thread answers before it could run a kept run. */
    long answerElements;

    /** Notes outputs this thread will answer (encode and write) before it runs again. */
    void answering(Map<String, Tensor> outputs) {
      for (Tensor t : outputs.values()) {
        answerElements += t.datatype() == Datatype.BYTES ? SMALL_ANSWER : t.elementCount();
      }
    }

    void perform() {
      if (rejected) {
        metrics.rejected();
      }
      long now = expired.isEmpty() ? 0 : ticker.read();
      for (Call c : expired) {
        metrics.ended(false, now - c.enqueued, now);
        c.result.completeExceptionally(
            new UnavailableException(
                "the request waited in the queue of model '" + key + "' past its deadline",
                RETRY_AFTER));
      }
      if (timerDelay >= 0) {
        timer.schedule(ModelExecutor.this::onTimer, timerDelay);
      }
      List<Call> here = null;
      // answers that fit the transport's buffers are written without waiting for the client, so a
      // kept run cannot be held up by a client that does not read
      boolean keep = mayKeep && answerElements <= SMALL_ANSWER;
      for (List<Call> batch : runs) {
        if (batch.size() == 1 && batch.get(0) == caller) {
          here = batch;
        } else if (keep && kept == null) {
          kept = batch;
        } else {
          handOff(batch);
        }
      }
      if (here != null && !run(here, true)) {
        handOff(here);
      }
    }
  }

  /** Hands a run that holds a slot to the executor. */
  private void handOff(List<Call> batch) {
    try {
      executor.execute(() -> runOnModelThread(batch));
    } catch (RejectedExecutionException e) {
      for (Call c : batch) {
        c.result.completeExceptionally(
            new UnavailableException("the server is shutting down", RETRY_AFTER));
      }
      lock.lock();
      try {
        running--;
        signalIfIdle();
      } finally {
        lock.unlock();
      }
    }
  }

  /**
   * Runs {@code batch}, then each run that giving its slot back starts, on this thread, while its
   * answers are small: a busy model's runs follow one another without waking another thread.
   */
  private void runOnModelThread(List<Call> batch) {
    for (List<Call> next = batch; next != null; ) {
      Work after = new Work();
      after.mayKeep = true;
      try {
        run(next, false, after);
      } catch (Error e) {
        if (after.kept != null) {
          handOff(after.kept); // the slot it holds is used, not lost
        }
        throw e;
      }
      next = after.kept;
    }
  }

  @Override
  public String toString() {
    return "ModelExecutor[" + key + "]";
  }
}
