package dev.modelkeeper.core.testkit;

import java.util.logging.Level;
import java.util.logging.Logger;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Silences the library's logging for each test of a class ({@code @ExtendWith(QuietLogs.class)}):
 * tests that inject failures would otherwise print the warnings, with stack traces, that the
 * library logs for them by design. {@link LogCapture} still records what a test asks for. For
 * classes whose tests run one at a time.
 */
public final class QuietLogs implements BeforeEachCallback, AfterEachCallback {

  private static final Logger CORE = Logger.getLogger("dev.modelkeeper.core");

  private Level previous;

  @Override
  public void beforeEach(ExtensionContext context) {
    previous = CORE.getLevel();
    CORE.setLevel(Level.OFF);
  }

  @Override
  public void afterEach(ExtensionContext context) {
    CORE.setLevel(previous);
  }
}
