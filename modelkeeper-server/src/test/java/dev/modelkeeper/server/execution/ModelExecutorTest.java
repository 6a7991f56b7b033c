package dev.modelkeeper.server.execution;

import static dev.modelkeeper.server.execution.Execution.ANY_RUN;
import static dev.modelkeeper.server.execution.Execution.NO_RUN;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.modelkeeper.core.testkit.Gate;
import dev.modelkeeper.onnx.InferenceModel;
import dev.modelkeeper.onnx.InvalidInputException;
import dev.modelkeeper.onnx.ModelConfig;
import dev.modelkeeper.onnx.Tensor;
import dev.modelkeeper.server.errors.UnavailableException;
import dev.modelkeeper.server.request.ModelTarget;
import dev.modelkeeper.testkit.RowModel;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The per-model executor on a fake ticker, a fake timer and a hand-cranked executor: batches form,
 * wait and split as configured, and failures, cancellations and deadlines stay with their own
 * requests. No test sleeps; the few that use real threads order them with gates.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ModelExecutorTest {

  private static final long US = 1_000;
  private static final long FAR = Long.MAX_VALUE / 4;
  private static final ModelTarget TARGET = new ModelTarget("rows", "1", "rows/1", null);

  private final AtomicLong now = new AtomicLong(1_000_000_000L);
  private final List<long[]> timerDue = new ArrayList<>();
  private final List<Runnable> timerTasks = new ArrayList<>();
  private final ArrayDeque<Runnable> runQueue = new ArrayDeque<>();
  private final AtomicInteger openLeases = new AtomicInteger();
  private final AtomicInteger leasesTaken = new AtomicInteger();
  private final AtomicInteger rejections = new AtomicInteger();
  private final List<Integer> batchRows = new ArrayList<>();

  /** Whether the fake access can lease at once (the model is resident); off: every run queues. */
  private final AtomicBoolean resident = new AtomicBoolean();

  private final List<Thread> ranOn = new CopyOnWriteArrayList<>();
  private ExecutorService pool;

  @AfterEach
  void stopPool() {
    if (pool != null) {
      pool.shutdownNow();
    }
  }

  private ModelExecutor executor(RowModel model, int maxConcurrency, int maxQueueSize) {
    return executor(model, maxConcurrency, maxQueueSize, runQueue::add);
  }

  private ModelExecutor executor(
      RowModel model, int maxConcurrency, int maxQueueSize, Executor runs) {
    ExecutionSettings defaults =
        new ExecutionSettings(1, 0, Set.of(), maxConcurrency, maxQueueSize);
    ModelExecutor.ModelAccess access =
        new ModelExecutor.ModelAccess() {
          @Override
          public void withModel(ModelTarget target, Consumer<InferenceModel> work) {
            leasesTaken.incrementAndGet();
            openLeases.incrementAndGet();
            ranOn.add(Thread.currentThread());
            try {
              work.accept(model);
            } finally {
              openLeases.decrementAndGet();
            }
          }

          @Override
          public boolean withModelIfResident(ModelTarget target, Consumer<InferenceModel> work) {
            if (!resident.get()) {
              return false;
            }
            withModel(target, work);
            return true;
          }
        };
    return new ModelExecutor(
        "rows/1",
        defaults,
        m -> defaults.overriddenBy(m.config().execution()),
        access,
        runs,
        (task, delay) -> {
          synchronized (timerTasks) {
            timerDue.add(new long[] {now.get() + delay});
            timerTasks.add(task);
          }
        },
        now::get,
        new ExecutionListener() {
          @Override
          public void rejected() {
            rejections.incrementAndGet();
          }

          @Override
          public void waited(long queueNanos) {}

          @Override
          public void ran(int requests, int rows, long runNanos) {
            synchronized (batchRows) {
              batchRows.add(rows);
            }
          }
        });
  }

  /** Runs every hand-cranked run task, including those the runs start. */
  private void runAll() {
    Runnable r;
    while ((r = runQueue.poll()) != null) {
      r.run();
    }
  }

  /** Advances the fake clock and fires the timers that are due. */
  private void advance(long nanos) {
    now.addAndGet(nanos);
    List<Runnable> due = new ArrayList<>();
    synchronized (timerTasks) {
      for (int i = timerTasks.size() - 1; i >= 0; i--) {
        if (timerDue.get(i)[0] <= now.get()) {
          due.add(timerTasks.remove(i));
          timerDue.remove(i);
        }
      }
    }
    due.forEach(Runnable::run);
  }

  /** One first run, so the executor has seen the model and batches from now on. */
  private void warm(ModelExecutor e) throws Exception {
    CompletableFuture<Map<String, Tensor>> f =
        e.submit(TARGET, RowModel.rows(1, 2, 0), Set.of(), FAR, NO_RUN);
    runAll();
    f.get(1, TimeUnit.SECONDS);
    batchRows.clear();
  }

  private static RowModel model(int maxBatch, long delayMicros, Integer... preferred) {
    return new RowModel(
        "rows", new ModelConfig.Execution(maxBatch, delayMicros, List.of(preferred), -1, -1, -1));
  }

  private CompletableFuture<Map<String, Tensor>> submit(ModelExecutor e, int rows, float first) {
    return e.submit(TARGET, RowModel.rows(rows, 2, first), Set.of(), FAR, NO_RUN);
  }

  /** A submit whose caller lets the executor run it on this thread. */
  private CompletableFuture<Map<String, Tensor>> submitHere(
      ModelExecutor e, int rows, float first) {
    return submitHere(e, rows, first, ANY_RUN);
  }

  /** A submit whose caller waits on this thread for runs that typically take at most a bound. */
  private CompletableFuture<Map<String, Tensor>> submitHere(
      ModelExecutor e, int rows, float first, long runHereUpToNanos) {
    return e.submit(TARGET, RowModel.rows(rows, 2, first), Set.of(), FAR, runHereUpToNanos);
  }

  /** Asserts that {@code f} was handed to the executor, and what it answers once that ran. */
  private void assertRunsOnTheExecutor(CompletableFuture<Map<String, Tensor>> f, float... y)
      throws Exception {
    assertThat(f).isNotDone();
    assertThat(runQueue).hasSize(1);
    runAll();
    assertThat(y(f)).containsExactly(y);
  }

  private static float[] y(CompletableFuture<Map<String, Tensor>> f) throws Exception {
    return f.get(1, TimeUnit.SECONDS).get("y").floats();
  }

  @Test
  void submit_partialBatch_runsOnceWhenTheOldestRequestHasWaitedTheDelay() throws Exception {
    RowModel model = model(8, 100);
    ModelExecutor e = executor(model, 1, 16);
    warm(e);
    CompletableFuture<Map<String, Tensor>> a = submit(e, 1, 10);
    advance(40 * US);
    CompletableFuture<Map<String, Tensor>> b = submit(e, 2, 20);
    runAll();
    assertThat(a).isNotDone();
    advance(59 * US); // 99 µs after the first request
    runAll();
    assertThat(a).isNotDone();
    assertThat(e.queued()).isEqualTo(2);
    advance(1 * US);
    runAll();
    assertThat(y(a)).containsExactly(11, 12);
    assertThat(y(b)).containsExactly(21, 22, 23, 24);
    assertThat(model.runs()).containsExactly(1L, 3L);
    assertThat(batchRows).containsExactly(3);
    assertThat(leasesTaken.get()).isEqualTo(2); // the warm-up and the one batch
  }

  @Test
  void submit_fullOrPreferredBatch_runsWithoutWaiting() throws Exception {
    RowModel model = model(4, 1_000_000, 3);
    ModelExecutor e = executor(model, 1, 16);
    warm(e);
    CompletableFuture<Map<String, Tensor>> a = submit(e, 1, 0);
    CompletableFuture<Map<String, Tensor>> b = submit(e, 2, 0);
    runAll();
    assertThat(a).isDone();
    assertThat(b).isDone();
    CompletableFuture<Map<String, Tensor>> c = submit(e, 2, 0);
    CompletableFuture<Map<String, Tensor>> d = submit(e, 2, 0);
    runAll();
    assertThat(c).isDone();
    assertThat(d).isDone();
    assertThat(model.runs()).containsExactly(1L, 3L, 4L);
  }

  @Test
  void submit_batchingOffOrUnseenModel_runsEachRequestAlone() throws Exception {
    RowModel model = model(1, 0);
    ModelExecutor e = executor(model, 4, 16);
    warm(e);
    List<CompletableFuture<Map<String, Tensor>>> fs = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      fs.add(submit(e, 1, i));
    }
    runAll();
    assertThat(model.runs()).containsExactly(1L, 1L, 1L, 1L);
    for (int i = 0; i < 3; i++) {
      assertThat(y(fs.get(i))).containsExactly(i + 1, i + 2);
    }
  }

  @Test
  void submit_mixedShapesAndOutputs_batchOnlyWithTheirLikes() throws Exception {
    RowModel model = model(8, 100);
    ModelExecutor e = executor(model, 1, 16);
    warm(e);
    CompletableFuture<Map<String, Tensor>> twoCols = submit(e, 1, 0);
    CompletableFuture<Map<String, Tensor>> threeCols =
        e.submit(TARGET, RowModel.rows(1, 3, 100), Set.of(), FAR, NO_RUN);
    CompletableFuture<Map<String, Tensor>> twoColsAgain = submit(e, 2, 20);
    CompletableFuture<Map<String, Tensor>> sumOnly =
        e.submit(TARGET, RowModel.rows(1, 2, 50), Set.of("sum"), FAR, NO_RUN);
    CompletableFuture<Map<String, Tensor>> tooBig = submit(e, 9, -100);
    advance(100 * US);
    runAll();
    advance(100 * US);
    runAll();
    advance(100 * US);
    runAll();
    advance(100 * US);
    runAll();
    assertThat(model.runs()).containsExactly(1L, 3L, 1L, 1L, 9L);
    assertThat(y(twoCols)).containsExactly(1, 2);
    assertThat(y(twoColsAgain)).containsExactly(21, 22, 23, 24);
    assertThat(y(threeCols)).containsExactly(101, 102, 103);
    assertThat(sumOnly.get(1, TimeUnit.SECONDS)).containsOnlyKeys("sum");
    assertThat(sumOnly.get().get("sum").floats()).containsExactly(101);
    assertThat(tooBig.get(1, TimeUnit.SECONDS).get("y").shape()).containsExactly(9, 2);
  }

  @Test
  void submit_badInputInABatch_failsOnlyThatRequest() throws Exception {
    RowModel model = model(8, 0);
    ModelExecutor e = executor(model, 1, 16);
    warm(e);
    CompletableFuture<Map<String, Tensor>> blocker = submit(e, 1, 0); // running, not yet run
    CompletableFuture<Map<String, Tensor>> good = submit(e, 1, 1);
    CompletableFuture<Map<String, Tensor>> bad =
        e.submit(
            TARGET,
            Map.of("x", Tensor.ofFloats("x", new long[] {1, 2}, 1, Float.NaN)),
            Set.of(),
            FAR,
            NO_RUN);
    CompletableFuture<Map<String, Tensor>> good2 = submit(e, 1, 3);
    runAll();
    assertThat(y(blocker)).containsExactly(1, 2);
    assertThat(y(good)).containsExactly(2, 3);
    assertThat(y(good2)).containsExactly(4, 5);
    assertThatThrownBy(() -> bad.get(1, TimeUnit.SECONDS))
        .hasCauseInstanceOf(InvalidInputException.class);
    // the merged run of three failed, then each ran alone
    assertThat(model.runs()).containsExactly(1L, 1L, 3L, 1L, 1L, 1L);
  }

  @Test
  void submit_failingBatch_failsOnlyItsOwnRequests() throws Exception {
    RowModel model = model(2, 0);
    ModelExecutor e = executor(model, 1, 16);
    warm(e);
    CompletableFuture<Map<String, Tensor>> blocker = submit(e, 1, 0);
    CompletableFuture<Map<String, Tensor>> broken1 = submit(e, 1, 13); // breaks its batch's run
    CompletableFuture<Map<String, Tensor>> broken2 = submit(e, 1, 0);
    CompletableFuture<Map<String, Tensor>> next1 = submit(e, 1, 5);
    CompletableFuture<Map<String, Tensor>> next2 = submit(e, 1, 6);
    runAll();
    assertThat(y(blocker)).containsExactly(1, 2);
    assertThatThrownBy(() -> broken1.get(1, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .hasMessageContaining("broke on 13");
    assertThatThrownBy(() -> broken2.get(1, TimeUnit.SECONDS)).hasMessageContaining("broke on 13");
    assertThat(y(next1)).containsExactly(6, 7);
    assertThat(y(next2)).containsExactly(7, 8);
    assertThat(openLeases.get()).isZero();
  }

  @Test
  void cancel_queuedRequest_leavesTheRestOfItsBatch() throws Exception {
    RowModel model = model(8, 100);
    ModelExecutor e = executor(model, 1, 16);
    warm(e);
    CompletableFuture<Map<String, Tensor>> a = submit(e, 1, 0);
    CompletableFuture<Map<String, Tensor>> b = submit(e, 1, 10);
    CompletableFuture<Map<String, Tensor>> c = submit(e, 1, 20);
    b.cancel(false);
    assertThat(e.queued()).isEqualTo(2);
    advance(100 * US);
    runAll();
    assertThat(y(a)).containsExactly(1, 2);
    assertThat(y(c)).containsExactly(21, 22);
    assertThat(model.runs()).containsExactly(1L, 2L);
  }

  @Test
  void cancel_duringARun_othersOfTheBatchGetTheirRows() throws Exception {
    pool = Executors.newCachedThreadPool();
    Gate gate = new Gate();
    RowModel model = model(8, 100);
    ModelExecutor e = executor(model, 1, 16, pool);
    CompletableFuture<Map<String, Tensor>> first = submit(e, 1, 0);
    first.get(10, TimeUnit.SECONDS);
    model.gate(gate);
    CompletableFuture<Map<String, Tensor>> a = submit(e, 1, 0);
    CompletableFuture<Map<String, Tensor>> b = submit(e, 1, 10);
    advance(100 * US);
    gate.awaitEntered();
    b.cancel(false);
    gate.open();
    assertThat(y(a)).containsExactly(1, 2);
    assertThat(b).isCancelled();
    assertThat(model.runs()).containsExactly(1L, 2L);
  }

  @Test
  void submit_deadlineBeforeTheDelay_runsTheBatchAtTheDeadline() throws Exception {
    RowModel model = model(8, 1_000);
    ModelExecutor e = executor(model, 1, 16);
    warm(e);
    CompletableFuture<Map<String, Tensor>> a = submit(e, 1, 0);
    CompletableFuture<Map<String, Tensor>> urgent =
        e.submit(TARGET, RowModel.rows(1, 2, 10), Set.of(), now.get() + 300 * US, NO_RUN);
    advance(299 * US);
    runAll();
    assertThat(a).isNotDone();
    advance(1 * US); // the urgent request's deadline: the batch runs, 700 µs before its delay
    runAll();
    assertThat(y(a)).containsExactly(1, 2);
    assertThat(y(urgent)).containsExactly(11, 12);
    assertThat(model.runs()).containsExactly(1L, 2L);
  }

  @Test
  void submit_deadlinePassesWhileQueued_failsWithoutRunning() throws Exception {
    RowModel model = model(1, 0);
    ModelExecutor e = executor(model, 1, 16);
    warm(e);
    CompletableFuture<Map<String, Tensor>> running = submit(e, 1, 0); // holds the one slot
    CompletableFuture<Map<String, Tensor>> late =
        e.submit(TARGET, RowModel.rows(1, 2, 10), Set.of(), now.get() + 10 * US, NO_RUN);
    advance(11 * US);
    runAll();
    assertThat(y(running)).containsExactly(1, 2);
    assertThatThrownBy(() -> late.get(1, TimeUnit.SECONDS))
        .hasCauseInstanceOf(UnavailableException.class)
        .hasMessageContaining("past its deadline");
    assertThat(model.runs()).containsExactly(1L, 1L);
  }

  @Test
  void submit_queueFull_isRefused503AndCounted() throws Exception {
    RowModel model = model(1, 0);
    ModelExecutor e = executor(model, 1, 2);
    warm(e);
    submit(e, 1, 0); // runs
    submit(e, 1, 0); // queued
    submit(e, 1, 0); // queued
    CompletableFuture<Map<String, Tensor>> refused = submit(e, 1, 0);
    assertThatThrownBy(() -> refused.get(1, TimeUnit.SECONDS))
        .hasCauseInstanceOf(UnavailableException.class)
        .hasMessageContaining("2 requests queued");
    assertThat(rejections.get()).isEqualTo(1);
    assertThat(runQueue).hasSize(1); // max_concurrency 1: one run handed out
    runAll();
    assertThat(model.runs()).hasSize(4);
  }

  @Test
  void submit_underLoad_batchesWhatQueuedBehindARunEvenWithoutDelay() throws Exception {
    RowModel model = model(32, 0);
    ModelExecutor e = executor(model, 1, 64);
    warm(e);
    List<CompletableFuture<Map<String, Tensor>>> fs = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      fs.add(submit(e, 1, i));
    }
    runAll();
    assertThat(model.runs()).containsExactly(1L, 1L, 9L);
    for (int i = 0; i < 10; i++) {
      assertThat(y(fs.get(i))).containsExactly(i + 1, i + 2);
    }
  }

  @Test
  void submit_aloneWithAFreeSlotOnAResidentModel_runsOnTheCallingThread() throws Exception {
    RowModel model = model(1, 0);
    ModelExecutor e = executor(model, 1, 16);
    warm(e);
    resident.set(true);
    ranOn.clear();
    CompletableFuture<Map<String, Tensor>> f = submitHere(e, 1, 5);
    assertThat(f).isDone(); // no hand-off: answered before submit returned
    assertThat(runQueue).isEmpty();
    assertThat(ranOn).containsExactly(Thread.currentThread());
    assertThat(y(f)).containsExactly(6, 7);
    assertThat(openLeases.get()).isZero();

    CompletableFuture<Map<String, Tensor>> queued = submit(e, 1, 5); // the caller gave no leave
    assertRunsOnTheExecutor(queued, 6, 7);
  }

  @Test
  void submit_callerBoundUnderTheModelsTypicalRun_handsTheRunToTheExecutor() throws Exception {
    RowModel model = model(1, 0).duringRun(() -> now.addAndGet(300 * US));
    ModelExecutor e = executor(model, 1, 16);
    resident.set(true);
    // no run seen yet: how long one takes is unknown, so a bounded caller does not wait for it
    CompletableFuture<Map<String, Tensor>> unseen = submitHere(e, 1, 0, 300 * US);
    assertThat(unseen).isNotDone();
    runAll(); // a run of 300 µs
    assertThat(y(unseen)).containsExactly(1, 2);

    CompletableFuture<Map<String, Tensor>> over = submitHere(e, 1, 5, 299 * US);
    assertRunsOnTheExecutor(over, 6, 7);

    ranOn.clear();
    CompletableFuture<Map<String, Tensor>> within = submitHere(e, 1, 5, 300 * US);
    assertThat(within).isDone();
    assertThat(ranOn).containsExactly(Thread.currentThread());
  }

  @Test
  void submit_modelNotResident_handsTheRunToTheExecutor() throws Exception {
    RowModel model = model(1, 0);
    ModelExecutor e = executor(model, 1, 16);
    resident.set(false);
    CompletableFuture<Map<String, Tensor>> f = submitHere(e, 1, 5);
    assertRunsOnTheExecutor(f, 6, 7);
  }

  @Test
  void submit_everySlotTaken_queuesAndRunsOnTheExecutorKeepingTheLimit() throws Exception {
    RowModel model = model(1, 0);
    ModelExecutor e = executor(model, 1, 16);
    warm(e);
    resident.set(false);
    CompletableFuture<Map<String, Tensor>> first = submitHere(e, 1, 0); // holds the one slot
    resident.set(true);
    CompletableFuture<Map<String, Tensor>> second = submitHere(e, 1, 10);
    assertThat(second).isNotDone(); // max_concurrency 1: it may not run beside the first
    assertThat(e.queued()).isEqualTo(1);
    runAll();
    assertThat(y(first)).containsExactly(1, 2);
    assertThat(y(second)).containsExactly(11, 12);
    assertThat(model.runs()).containsExactly(1L, 1L, 1L);
  }

  @Test
  void run_moreQueuedWhenItEnds_theModelThreadRunsThemItselfAfterAnsweringEach() throws Exception {
    List<Integer> answeredBeforeRun = new CopyOnWriteArrayList<>();
    List<CompletableFuture<Map<String, Tensor>>> fs = new CopyOnWriteArrayList<>();
    RowModel model =
        model(1, 0)
            .duringRun(
                () -> answeredBeforeRun.add((int) fs.stream().filter(f -> f.isDone()).count()));
    ModelExecutor e = executor(model, 1, 16);
    for (int i = 0; i < 3; i++) {
      fs.add(submit(e, 1, 10 * i));
    }
    assertThat(runQueue).hasSize(1); // one slot: the first run; the others queue behind it
    Runnable firstRun = runQueue.poll();
    firstRun.run();
    // the thread that ran the first ran the two queued after it, handing nothing to another
    assertThat(runQueue).isEmpty();
    assertThat(answeredBeforeRun).containsExactly(0, 1, 2); // each answered before the next ran
    for (int i = 0; i < 3; i++) {
      assertThat(y(fs.get(i))).containsExactly(10 * i + 1, 10 * i + 2);
    }
    assertThat(openLeases.get()).isZero();
  }

  @Test
  void run_largeAnswersToWrite_handsTheNextRunToAnotherThread() throws Exception {
    RowModel model = model(1, 0);
    ModelExecutor e = executor(model, 1, 16);
    // answers of 2,000 values may wait for their client to read: the slot is not held meanwhile
    // (values from 100 on: the test model fails on 13)
    List<CompletableFuture<Map<String, Tensor>>> fs = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      fs.add(e.submit(TARGET, RowModel.rows(1, 2_000, 100 * i + 100), Set.of(), FAR, NO_RUN));
    }
    int tasks = 0;
    Runnable r;
    while ((r = runQueue.poll()) != null) {
      tasks++;
      r.run();
    }
    assertThat(tasks).isEqualTo(3);
    for (CompletableFuture<Map<String, Tensor>> f : fs) {
      assertThat(f.get(1, TimeUnit.SECONDS).get("y").floats()).hasSize(2_000);
    }
  }

  @Test
  void submit_batchedModelWaitingForRows_doesNotRunOnTheCallingThread() throws Exception {
    RowModel model = model(8, 100);
    ModelExecutor e = executor(model, 1, 16);
    warm(e);
    resident.set(true);
    CompletableFuture<Map<String, Tensor>> a = submitHere(e, 1, 0);
    assertThat(a).isNotDone(); // it waits up to the delay for rows to join it
    CompletableFuture<Map<String, Tensor>> b = submitHere(e, 1, 10);
    advance(100 * US);
    runAll();
    assertThat(y(a)).containsExactly(1, 2);
    assertThat(y(b)).containsExactly(11, 12);
    assertThat(model.runs()).containsExactly(1L, 2L);
  }
}
