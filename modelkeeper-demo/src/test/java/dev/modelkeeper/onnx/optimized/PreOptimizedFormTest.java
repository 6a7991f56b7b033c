package dev.modelkeeper.onnx.optimized;

import static org.assertj.core.api.Assertions.assertThat;

import dev.modelkeeper.core.WithFixedSizeCache;
import dev.modelkeeper.onnx.ModelConfig;
import dev.modelkeeper.onnx.OnnxModel;
import dev.modelkeeper.onnx.OnnxModelOptions;
import dev.modelkeeper.onnx.Tensor;
import dev.modelkeeper.onnx.demo.Mlp;
import dev.modelkeeper.onnx.memory.WorkingMemory;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Pre-optimized forms on real ONNX Runtime sessions: a form is built and read with the same answers
 * as the model file; a changed model file or another runtime version never reads a form made for
 * the old one; a truncated form is built again, not read; two processes sharing the folder build a
 * form once.
 */
class PreOptimizedFormTest {

  private static final String RUNTIME = "1.22.0";

  @TempDir Path tmp;

  private final ExecutorService background = Executors.newSingleThreadExecutor();

  @AfterEach
  void stopBackground() throws Exception {
    background.shutdownNow();
    assertThat(background.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
  }

  /** What a folder's loads and builds did, in order; thread-safe. */
  static class Events implements OptimizedModels.Listener {
    final List<String> reading = new CopyOnWriteArrayList<>();
    final List<String> building = new CopyOnWriteArrayList<>();
    final List<String> published = new CopyOnWriteArrayList<>();
    final List<String> dropped = new CopyOnWriteArrayList<>();

    @Override
    public void reading(Path modelFile, String key) {
      reading.add(key);
    }

    @Override
    public void building(Path modelFile, String key) {
      building.add(key);
    }

    @Override
    public void published(String key) {
      published.add(key);
    }

    @Override
    public void dropped(String key, String why) {
      dropped.add(key + ": " + why);
    }
  }

  private final Events events = new Events();

  private Path folder() {
    return tmp.resolve("optimized");
  }

  /** Forms in {@link #folder()} for {@code runtime}, built on the loading thread. */
  private OptimizedModels forms(String runtime) {
    return OptimizedModels.in(folder(), runtime, 0, Runnable::run, events);
  }

  /** Loads {@code file}, runs it on one row of ones and closes it; its output. */
  private static float[] loadAndRun(Path file, OptimizedModels forms) throws Exception {
    OnnxModel model =
        OnnxModel.load(
            file,
            "mlp",
            "1",
            ModelConfig.EMPTY,
            OnnxModelOptions.defaults().withOptimizedModels(forms));
    try {
      float[] ones = new float[256];
      Arrays.fill(ones, 1f);
      Map<String, Tensor> out =
          model.infer(
              Map.of(Mlp.INPUT, Tensor.ofFloats(Mlp.INPUT, new long[] {1, 256}, ones)), Set.of());
      return (float[]) out.get(Mlp.OUTPUT).data();
    } finally {
      model.clearCache();
    }
  }

  /** Writes the model of {@code seed} to {@code model.onnx}, last modified an hour ago. */
  private Path model(long seed) throws Exception {
    Path file = Mlp.random(seed, 256, 64, 16).writeTo(tmp.resolve("model.onnx"));
    Files.setLastModifiedTime(
        file, FileTime.from(Instant.now().minusSeconds(3600).truncatedTo(ChronoUnit.SECONDS)));
    return file;
  }

  private List<String> entries() throws Exception {
    try (Stream<Path> list = Files.list(folder())) {
      return list.filter(Files::isDirectory).map(p -> p.getFileName().toString()).toList();
    }
  }

  @Test
  void load_withNoForm_buildsIt_andReadsItWithTheModelFilesAnswers() throws Exception {
    Path file = model(1);
    float[] plain = loadAndRun(file, OptimizedModels.NONE);

    float[] first = loadAndRun(file, forms(RUNTIME));
    float[] second = loadAndRun(file, forms(RUNTIME));

    assertThat(events.building).hasSize(1);
    assertThat(events.published).isEqualTo(events.building);
    String key = events.building.get(0);
    assertThat(events.reading).containsExactly(key, key);
    assertThat(events.dropped).isEmpty();
    Path entry = folder().resolve(key);
    assertThat(entry.resolve("model.onnx.data")).as("the weights sit beside the graph").exists();
    assertThat(Files.size(entry.resolve("model.onnx"))).isLessThan(Files.size(file) / 10);
    assertThat(first).containsExactly(plain);
    assertThat(second).containsExactly(plain);
  }

  @Test
  void load_whenTheBudgetHasNoRoomToWriteTheForm_writesNone_andALaterLoadWritesIt()
      throws Exception {
    Path file = model(1);
    OptimizedModels forms = forms(RUNTIME);
    WorkingMemory full =
        new WorkingMemory() {
          @Override
          public WithFixedSizeCache.Reservation reserve(String modelId, long bytes) {
            throw new AssertionError("a form must not wait for room, nor evict for it");
          }

          @Override
          public Optional<WithFixedSizeCache.Reservation> tryReserve(String modelId, long bytes) {
            return Optional.empty();
          }
        };
    OnnxModel.load(
            file,
            "mlp",
            "1",
            ModelConfig.EMPTY,
            OnnxModelOptions.defaults().withWorkingMemory(full).withOptimizedModels(forms))
        .clearCache();
    assertThat(events.published).isEmpty();
    assertThat(entries()).isEmpty();

    loadAndRun(file, forms); // room now

    assertThat(events.published).hasSize(1);
    assertThat(events.reading).containsExactlyElementsOf(events.published);
  }

  @Test
  void load_afterClose_readsTheFormsKept_andBuildsNoMore() throws Exception {
    Path kept = model(1);
    OptimizedModels forms = forms(RUNTIME);
    loadAndRun(kept, forms);

    assertThat(forms.close(Duration.ofSeconds(30))).isTrue();
    loadAndRun(kept, forms);
    loadAndRun(Mlp.random(3, 256, 64, 16).writeTo(tmp.resolve("new.onnx")), forms);

    assertThat(events.building).hasSize(1);
    assertThat(events.reading).containsExactly(events.building.get(0), events.building.get(0));
  }

  @Test
  void load_afterTheModelFileChangedKeepingItsLengthAndTime_neverReadsTheOldForm()
      throws Exception {
    Path file = model(1);
    OptimizedModels forms = forms(RUNTIME); // one object: its memo of the file's digest too
    loadAndRun(file, forms);
    FileTime modified = Files.getLastModifiedTime(file);
    long size = Files.size(file);

    model(2); // other weights, the same length and modification time: a copy keeping its time
    Files.setLastModifiedTime(file, modified);
    assertThat(Files.size(file)).isEqualTo(size);
    float[] expected = loadAndRun(file, OptimizedModels.NONE);
    float[] answered = loadAndRun(file, forms);

    assertThat(events.building).hasSize(2).doesNotHaveDuplicates();
    assertThat(events.reading).containsExactlyElementsOf(events.building);
    assertThat(answered).containsExactly(expected);
    assertThat(entries())
        .as("the form of the old content is deleted once the new one is kept")
        .containsExactly(events.building.get(1));
  }

  @Test
  void load_underAnotherRuntimeVersion_buildsAndReadsItsOwnForm() throws Exception {
    Path file = model(1);
    loadAndRun(file, forms(RUNTIME));

    loadAndRun(file, forms("1.22.1"));

    assertThat(events.building).hasSize(2).doesNotHaveDuplicates();
    assertThat(events.reading).containsExactlyElementsOf(events.building);
    assertThat(events.dropped).as("the first runtime's form is never even looked at").isEmpty();
  }

  @Test
  void load_ofATruncatedForm_rebuildsIt_insteadOfReadingIt() throws Exception {
    Path file = model(1);
    float[] expected = loadAndRun(file, OptimizedModels.NONE);
    loadAndRun(file, forms(RUNTIME));
    String key = events.building.get(0);
    Path data = folder().resolve(key).resolve("model.onnx.data");
    try (FileChannel ch = FileChannel.open(data, StandardOpenOption.WRITE)) {
      ch.truncate(ch.size() / 2);
    }

    float[] answered = loadAndRun(file, forms(RUNTIME)); // a new process's view: nothing checked

    assertThat(events.dropped)
        .as("found by its check, not by ONNX Runtime reading it")
        .singleElement()
        .asString()
        .contains("model.onnx.data has");
    assertThat(events.building).containsExactly(key, key);
    assertThat(events.published).containsExactly(key, key);
    assertThat(answered).containsExactly(expected);
    assertThat(Files.size(data)).isGreaterThan(0);
  }

  @Test
  void load_whileAnotherProcessBuildsTheForm_readsTheModelFile_andTheFormIsBuiltOnce()
      throws Exception {
    Path file = model(1);
    CountDownLatch holding = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    Events mine =
        new Events() {
          @Override
          public void building(Path modelFile, String key) {
            super.building(modelFile, key);
            holding.countDown();
            try {
              release.await(60, TimeUnit.SECONDS); // the builder holds the form's lock meanwhile
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }
        };
    loadAndRun(file, OptimizedModels.in(folder(), RUNTIME, 0, background, mine));
    assertThat(holding.await(60, TimeUnit.SECONDS)).isTrue();

    String whileBuilding = loadInAnotherProcess(file);
    release.countDown();
    background.shutdown();
    assertThat(background.awaitTermination(60, TimeUnit.SECONDS)).isTrue();
    String afterwards = loadInAnotherProcess(file);

    assertThat(whileBuilding).isEqualTo("built=false read=false");
    assertThat(mine.building).hasSize(1);
    assertThat(mine.published).isEqualTo(mine.building);
    assertThat(afterwards).isEqualTo("built=false read=true");
    assertThat(entries()).hasSize(1);
  }

  /** Loads {@code file} through {@link #folder()} in a child JVM; what it printed. */
  private String loadInAnotherProcess(Path file) throws Exception {
    Process child =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                System.getProperty("java.class.path"),
                FormLoadMain.class.getName(),
                folder().toString(),
                file.toString(),
                RUNTIME)
            .redirectError(ProcessBuilder.Redirect.DISCARD)
            .start();
    try (BufferedReader out =
        new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
      assertThat(child.waitFor(60, TimeUnit.SECONDS)).isTrue();
      assertThat(child.exitValue()).isZero();
      return out.readLine();
    } finally {
      child.destroyForcibly();
    }
  }
}
