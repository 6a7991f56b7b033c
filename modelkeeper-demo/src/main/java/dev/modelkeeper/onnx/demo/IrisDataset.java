package dev.modelkeeper.onnx.demo;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Fisher's Iris data (public domain), bundled as {@code iris.csv}: 150 flowers with sepal length,
 * sepal width, petal length and petal width in centimetres, 50 of each species. Immutable and
 * thread-safe.
 */
public final class IrisDataset {

  /** The species in class-index order. */
  public static final List<String> SPECIES = List.of("setosa", "versicolor", "virginica");

  /** The feature names in column order. */
  public static final List<String> FEATURES =
      List.of("sepal_length", "sepal_width", "petal_length", "petal_width");

  private static final IrisDataset INSTANCE = load();

  private final float[][] features;
  private final int[] labels;

  private IrisDataset(float[][] features, int[] labels) {
    this.features = features;
    this.labels = labels;
  }

  /** The bundled data set. */
  public static IrisDataset get() {
    return INSTANCE;
  }

  public int size() {
    return labels.length;
  }

  /** A copy of row {@code i}'s four measurements. */
  public float[] features(int i) {
    return features[i].clone();
  }

  /** Row {@code i}'s class index into {@link #SPECIES}. */
  public int label(int i) {
    return labels[i];
  }

  private static IrisDataset load() {
    List<float[]> rows = new ArrayList<>();
    List<Integer> classes = new ArrayList<>();
    try (InputStream in = IrisDataset.class.getResourceAsStream("iris.csv")) {
      if (in == null) {
        throw new IllegalStateException("iris.csv is missing from the classpath");
      }
      BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
      String line;
      boolean header = true;
      while ((line = r.readLine()) != null) {
        if (line.isBlank() || line.startsWith("#")) {
          continue;
        }
        if (header) {
          header = false;
          continue;
        }
        String[] f = line.split(",");
        float[] x = new float[4];
        for (int j = 0; j < 4; j++) {
          x[j] = Float.parseFloat(f[j]);
        }
        int label = SPECIES.indexOf(f[4].trim());
        if (label < 0) {
          throw new IllegalStateException("unknown species in iris.csv: " + line);
        }
        rows.add(x);
        classes.add(label);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read iris.csv", e);
    }
    int[] labels = classes.stream().mapToInt(Integer::intValue).toArray();
    return new IrisDataset(rows.toArray(new float[0][]), labels);
  }
}
