package dev.modelkeeper.server.execution;

import java.util.concurrent.LinkedTransferQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * A bounded thread pool that hands each task to an idle thread when there is one and starts a new
 * thread only when there is none; past its thread limit, tasks wait in a bounded queue.
 * Thread-safe.
 *
 * <p>A plain {@link ThreadPoolExecutor} starts a new thread for every task until it has its core
 * count, however many of its threads are idle. Each new thread's first work grows the process for
 * good (its stack, the C allocator's arena it draws on), so one client sending one request at a
 * time grew the server by tens of MB until all 64 workers existed. Here light traffic keeps a few
 * threads; threads idle for the keep-alive time end, all but one, which waits for work as long as
 * the pool lives (so a task queued behind the limit always has a thread to take it).
 */
final class IdleFirstPool {

  private IdleFirstPool() {}

  /**
   * A pool of at most {@code threads} threads and {@code queueCapacity} waiting tasks; idle threads
   * end after {@code keepAliveSeconds}. A task that finds both full is rejected with {@link
   * RejectedExecutionException}.
   */
  static ThreadPoolExecutor create(
      int threads, int queueCapacity, long keepAliveSeconds, ThreadFactory factory) {
    HandOffQueue queue = new HandOffQueue(queueCapacity);
    ThreadPoolExecutor pool =
        new ThreadPoolExecutor(
            1,
            threads,
            keepAliveSeconds,
            TimeUnit.SECONDS,
            queue,
            factory,
            (task, executor) -> {
              // every thread is busy and no more may start: the task waits its turn, if there is
              // room
              if (executor.isShutdown() || !queue.enqueue(task)) {
                throw new RejectedExecutionException("all threads are busy and the queue is full");
              }
            });
    return pool;
  }

  /**
   * The pool's queue: {@link #offer} succeeds only when a thread is waiting to take the task, so
   * the pool starts a thread otherwise; {@link #enqueue} is the bounded queue behind the thread
   * limit.
   */
  private static final class HandOffQueue extends LinkedTransferQueue<Runnable> {

    private static final long serialVersionUID = 1L;

    private final int capacity;

    HandOffQueue(int capacity) {
      this.capacity = capacity;
    }

    @Override
    public boolean offer(Runnable task) {
      return tryTransfer(task);
    }

    /** Queues {@code task} for the next thread that frees up; false when the queue is full. */
    boolean enqueue(Runnable task) {
      // size() walks the queue; this path is taken only when every thread is busy
      return size() < capacity && super.offer(task);
    }
  }
}
