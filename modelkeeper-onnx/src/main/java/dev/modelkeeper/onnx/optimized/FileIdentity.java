package dev.modelkeeper.onnx.optimized;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.util.Objects;

/**
 * Which content a file has, as far as its metadata tells: its real path, device and inode, length,
 * modification time and, where the system keeps one, change time. Writing a file changes its
 * modification and change times, and the change time cannot be set back, so a file whose identity
 * is unchanged still holds what was read from it. Immutable and thread-safe.
 *
 * @param fileKey the device and inode, or null where the system gives none
 * @param changed the change time ({@code unix:ctime}), or null where the system keeps none
 */
record FileIdentity(Path path, Object fileKey, long size, FileTime modified, FileTime changed) {

  /**
   * The identity of {@code file} now.
   *
   * @throws IOException when it cannot be read
   */
  static FileIdentity of(Path file) throws IOException {
    Path real = file.toRealPath();
    BasicFileAttributes a = Files.readAttributes(real, BasicFileAttributes.class);
    FileTime changed;
    try {
      changed = (FileTime) Files.getAttribute(real, "unix:ctime");
    } catch (UnsupportedOperationException | IllegalArgumentException e) {
      changed = null; // not a Unix file system: the modification time alone
    }
    return new FileIdentity(real, a.fileKey(), a.size(), a.lastModifiedTime(), changed);
  }

  /** Whether {@code file} still has this identity (false when it cannot be read). */
  boolean matches(Path file) {
    try {
      return equals(of(file));
    } catch (IOException e) {
      return false;
    }
  }

  FileIdentity {
    Objects.requireNonNull(path, "path");
    Objects.requireNonNull(modified, "modified");
  }
}
