package dev.modelkeeper.server.execution;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The worker pool reuses idle threads before it starts new ones, grows while its threads are busy,
 * queues past its thread limit and refuses past its queue.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class IdleFirstPoolTest {

  private final ThreadPoolExecutor pool =
      IdleFirstPool.create(
          8,
          4,
          30,
          r -> {
            Thread t = new Thread(r, "idle-first-test");
            t.setDaemon(true);
            return t;
          });

  @AfterEach
  void shutDown() throws InterruptedException {
    pool.shutdownNow();
    assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void tasksOneAtATime_reuseTheIdleThreads() throws Exception {
    for (int i = 0; i < 200; i++) {
      CompletableFuture.runAsync(() -> {}, pool).get(10, TimeUnit.SECONDS);
    }
    // a thread that finished a task may not be back waiting when the next one comes, so another
    // thread may start now and then (4 were seen on a loaded machine in a CI run); a pool that
    // starts a thread per task up to its limit reaches all 8 within the first 8 tasks
    assertThat(pool.getLargestPoolSize()).isLessThanOrEqualTo(5);
  }

  @Test
  void busyThreads_startNewOnesUpToTheLimit_thenTasksQueue_thenAreRefused() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch started = new CountDownLatch(8);
    List<CompletableFuture<Void>> tasks = new ArrayList<>();
    for (int i = 0; i < 12; i++) {
      tasks.add(
          CompletableFuture.runAsync(
              () -> {
                started.countDown();
                try {
                  release.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              },
              pool));
    }
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(pool.getPoolSize()).isEqualTo(8);
    assertThat(pool.getQueue()).hasSize(4);

    assertThatThrownBy(() -> pool.execute(() -> {})).isInstanceOf(RejectedExecutionException.class);

    release.countDown();
    CompletableFuture.allOf(tasks.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);
  }
}
