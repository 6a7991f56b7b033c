package dev.modelkeeper.onnx.demo;

import dev.modelkeeper.onnx.remote.Manifest;
import dev.modelkeeper.onnx.writer.OnnxGraphBuilder;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.DigestOutputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;

/**
 * The file operations of {@link DemoRepository}: small files written atomically (a temporary file
 * forced to disk, then renamed over the target), checks that a file already holds what would be
 * written, and removal of the temporary files an interrupted run left behind. Stateless and
 * thread-safe; callers serialize writers of one folder.
 */
final class RepositoryFiles {

  /** Prefixes of the temporary files written here and by {@link OnnxGraphBuilder#writeTo(Path)}. */
  private static final List<String> TEMP_PREFIXES = List.of(".demo-", ".config-", ".model-");

  private static final String TEMP_SUFFIX = ".tmp";

  private static final SecureRandom RANDOM = new SecureRandom();

  private RepositoryFiles() {}

  /**
   * Replaces {@code file} by {@code content} atomically: readers see the old or the new file. The
   * file gets the default permissions (the process umask), as a plain write would give it.
   */
  static void writeAtomically(Path file, byte[] content) throws IOException {
    Path tmp =
        file.toAbsolutePath()
            .resolveSibling(".demo-" + Long.toHexString(RANDOM.nextLong()) + TEMP_SUFFIX);
    try {
      try (FileChannel channel =
          FileChannel.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
        ByteBuffer bytes = ByteBuffer.wrap(content);
        while (bytes.hasRemaining()) {
          channel.write(bytes);
        }
        channel.force(true);
      }
      Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } finally {
      Files.deleteIfExists(tmp);
    }
  }

  /** Whether {@code file} exists and holds exactly {@code content}. */
  static boolean holds(Path file, byte[] content) throws IOException {
    return Files.isRegularFile(file)
        && Files.size(file) == content.length
        && Arrays.equals(Files.readAllBytes(file), content);
  }

  /**
   * Whether {@code file} exists and holds exactly the model {@code graph} writes; the model is
   * streamed into a digest, not into memory.
   */
  static boolean holds(Path file, OnnxGraphBuilder graph) throws IOException {
    if (!Files.isRegularFile(file)) {
      return false;
    }
    MessageDigest digest = sha256();
    try (OutputStream out =
        new BufferedOutputStream(
            new DigestOutputStream(OutputStream.nullOutputStream(), digest), 1 << 16)) {
      graph.writeTo(out);
    }
    return HexFormat.of().formatHex(digest.digest()).equals(Manifest.sha256(file));
  }

  /**
   * Deletes the temporary files of writes that never finished (a crash or a kill between creating
   * one and renaming it) in {@code root} and the model folders below it.
   */
  static void deleteAbandonedTempFiles(Path root) throws IOException {
    List<Path> abandoned = new ArrayList<>();
    try (Stream<Path> walk = Files.walk(root, 3)) {
      walk.filter(Files::isRegularFile).filter(RepositoryFiles::isTempFile).forEach(abandoned::add);
    }
    for (Path p : abandoned) {
      Files.deleteIfExists(p);
    }
  }

  private static boolean isTempFile(Path file) {
    String name = file.getFileName().toString();
    return name.endsWith(TEMP_SUFFIX) && TEMP_PREFIXES.stream().anyMatch(name::startsWith);
  }

  private static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("the JDK lacks SHA-256", e);
    }
  }
}
