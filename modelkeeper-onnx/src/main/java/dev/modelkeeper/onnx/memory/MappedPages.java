package dev.modelkeeper.onnx.memory;

import com.sun.jna.Function;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Pointer;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;

/**
 * Makes the pages of a file that this process has mapped resident now. Thread-safe; stateless.
 *
 * <p>ONNX Runtime maps the initializers of a model's external data file into memory and uses those
 * it does not repack in place: their pages are only read from the page cache, and only counted in
 * the process's RSS, when a run first touches them. A load measured by RSS would miss them and the
 * first run would seem to need them as working memory; {@link #populate} faults them in while the
 * load is measured ({@code madvise(MADV_POPULATE_READ)}, Linux 5.14, else a read of one byte per
 * page through {@code /proc/self/mem}), so that they count as what the loaded model keeps. The
 * mappings are found in {@code /proc/self/maps}; off Linux nothing is done.
 */
public final class MappedPages {

  private static final System.Logger LOG = System.getLogger(MappedPages.class.getName());
  private static final Path MAPS = Path.of("/proc/self/maps");
  private static final Path SELF_MEM = Path.of("/proc/self/mem");

  /**
   * {@code MADV_POPULATE_READ} of Linux's {@code mman-common.h}, the same on every architecture.
   */
  private static final int MADV_POPULATE_READ = 22;

  private static final long PAGE_BYTES = 4096;

  private MappedPages() {}

  /**
   * Faults in every page of this process's mappings of {@code file} (its real path); returns the
   * bytes of those mappings, 0 when there are none or the system does not tell.
   */
  public static long populate(Path file) {
    String suffix;
    List<String> lines;
    try {
      suffix = " " + file.toRealPath();
      lines = Files.readAllLines(MAPS, StandardCharsets.UTF_8);
    } catch (IOException | RuntimeException e) {
      return 0; // not Linux, or the file is gone: nothing mapped to count
    }
    long bytes = 0;
    for (String line : lines) {
      if (!line.endsWith(suffix)) {
        continue;
      }
      // "<from>-<to> <perms> <offset> <dev> <inode> <path>"
      int dash = line.indexOf('-');
      int space = line.indexOf(' ');
      if (dash < 0 || space < dash || line.length() < space + 2 || line.charAt(space + 1) != 'r') {
        continue;
      }
      long from = Long.parseUnsignedLong(line.substring(0, dash), 16);
      long to = Long.parseUnsignedLong(line.substring(dash + 1, space), 16);
      fault(from, to - from);
      bytes += to - from;
    }
    return bytes;
  }

  /**
   * Faults in the pages of {@code [address, address + length)}. The range may be unmapped at any
   * moment (another session of the same file closing), so it is never touched through a pointer:
   * {@code madvise} fails on a range that is gone, and the fallback, reading the range through
   * {@code /proc/self/mem} (which faults the pages into this process as a touch would), answers an
   * error for it.
   */
  static void fault(long address, long length) {
    Function madvise = Madvise.FUNCTION;
    if (madvise != null
        && madvise.invokeInt(new Object[] {new Pointer(address), length, MADV_POPULATE_READ})
            == 0) {
      return;
    }
    // a kernel before 5.14, or a range unmapped meanwhile: read, never touched
    try (FileChannel mem = FileChannel.open(SELF_MEM, StandardOpenOption.READ)) {
      ByteBuffer one = ByteBuffer.allocate(1);
      for (long at = 0; at < length; at += PAGE_BYTES) {
        if (mem.read(one.clear(), address + at) < 0) {
          return;
        }
      }
    } catch (IOException | RuntimeException e) {
      LOG.log(Level.DEBUG, "cannot fault in a mapping at {0}: {1}", address, e.toString());
    }
  }

  /** The C library's {@code madvise}, found once; null where it cannot be called. */
  private static final class Madvise {
    static final Function FUNCTION = find();

    private static Function find() {
      try {
        return NativeLibrary.getInstance("c").getFunction("madvise");
      } catch (UnsatisfiedLinkError | RuntimeException e) {
        LOG.log(Level.DEBUG, "madvise cannot be called: {0}", e.toString());
        return null;
      }
    }
  }
}
