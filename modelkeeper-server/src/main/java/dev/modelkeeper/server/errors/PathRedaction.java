package dev.modelkeeper.server.errors;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Takes the server's own folders out of what clients are told: a path inside one of them (the
 * repository, its download cache) is written relative to it, so an answer names {@code
 * iris/1/model.onnx}, never {@code /srv/models/iris/1/model.onnx}; the folder itself is {@code
 * <repository>}. The server's log keeps full paths. Immutable and thread-safe.
 */
public final class PathRedaction {

  /** Changes nothing. */
  public static final PathRedaction NONE = new PathRedaction(List.of());

  /** The folders as written in messages, longest first (a nested folder before its parent). */
  private final List<String> folders;

  private PathRedaction(List<String> folders) {
    this.folders = folders;
  }

  /** A redaction of {@code folders}, each as given and as its real path. */
  public static PathRedaction of(Collection<Path> folders) {
    Set<String> names = new LinkedHashSet<>();
    for (Path f : folders) {
      Path absolute = f.toAbsolutePath().normalize();
      names.add(absolute.toString());
      try {
        names.add(absolute.toRealPath().toString());
      } catch (IOException e) {
        // not there (yet): the path as given is all a message can name
      }
    }
    names.removeIf(n -> n.length() <= 1); // never the file system's root
    List<String> sorted = new ArrayList<>(names);
    sorted.sort(Comparator.comparingInt(String::length).reversed());
    return new PathRedaction(List.copyOf(sorted));
  }

  /** {@code message} with every path inside the folders made relative to its folder. */
  public String apply(String message) {
    if (message == null || folders.isEmpty()) {
      return message;
    }
    String out = message;
    for (String folder : folders) {
      if (out.contains(folder)) {
        out = out.replace(folder + "/", "").replace(folder, "<repository>");
      }
    }
    return out;
  }
}
