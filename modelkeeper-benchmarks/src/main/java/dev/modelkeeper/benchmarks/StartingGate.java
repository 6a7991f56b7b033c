package dev.modelkeeper.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntConsumer;

/**
 * Starts many threads at one instant and times how long until the last one is done: the clock
 * starts when the gate opens, after every thread is parked at it. Not thread-safe: one caller runs
 * one gate at a time.
 */
final class StartingGate {

  /**
   * The outcome of one release: wall time, and the first failure (if any) with the failure count.
   */
  record Outcome(long wallNanos, long failures, Throwable firstFailure) {}

  private StartingGate() {}

  /**
   * Runs {@code task.accept(i)} on thread {@code i} for {@code i < threads}, all released at once.
   */
  static Outcome release(int threads, IntConsumer task) throws InterruptedException {
    CountDownLatch ready = new CountDownLatch(threads);
    CountDownLatch go = new CountDownLatch(1);
    CountDownLatch done = new CountDownLatch(threads);
    LongAdder failures = new LongAdder();
    AtomicReference<Throwable> first = new AtomicReference<>();
    List<Thread> started = new ArrayList<>(threads);
    for (int i = 0; i < threads; i++) {
      int index = i;
      Thread t =
          new Thread(
              null,
              () -> {
                ready.countDown();
                try {
                  go.await();
                  task.accept(index);
                } catch (Throwable e) {
                  failures.increment();
                  first.compareAndSet(null, e);
                } finally {
                  done.countDown();
                }
              },
              "gate-" + i,
              256 * 1024);
      t.setDaemon(true);
      t.start();
      started.add(t);
    }
    ready.await();
    long start = System.nanoTime();
    go.countDown();
    if (!done.await(2, TimeUnit.MINUTES)) {
      throw new IllegalStateException("threads still running after 2 minutes");
    }
    long wall = System.nanoTime() - start;
    for (Thread t : started) {
      t.join(10_000);
    }
    return new Outcome(wall, failures.sum(), first.get());
  }
}
