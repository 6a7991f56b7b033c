package dev.modelkeeper.interop;

import static org.assertj.core.api.Assertions.assertThat;

import dev.modelkeeper.testkit.ServerProcess;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged server's pages in a real headless Chromium (Debian's {@code chromium} and {@code
 * chromium-driver}, installed when missing) driven by Selenium from the pinned venv: the status
 * page lists the demo models and updates itself after an inference, without console errors (see
 * {@code src/test/python/test_browser.py}).
 */
@Timeout(value = 15, unit = TimeUnit.MINUTES)
class BrowserTest {

  @TempDir static Path cache;

  private static ServerProcess server;
  private static List<Path> browser;

  @BeforeAll
  static void startServer() throws Exception {
    browser =
        DebianPackages.require(List.of("chromium", "chromedriver"), "chromium", "chromium-driver");
    server = ServerProcess.builder().cacheDir(cache).start();
  }

  @AfterAll
  static void stopServer() throws Exception {
    if (server != null) {
      server.close();
    }
  }

  @Test
  void pages_inChromium_loadAndUpdate_withoutConsoleErrors() throws Exception {
    Processes.Outcome run =
        Pytest.run(
            server,
            "test_browser.py",
            Map.of(
                "MK_CHROMIUM", browser.get(0).toString(),
                "MK_CHROMEDRIVER", browser.get(1).toString()));
    assertThat(run.exitCode()).as("pytest exit code; its output is above in the log").isZero();
    assertThat(run.output())
        .contains("test_status_page_lists_demo_models PASSED")
        .contains("test_status_page_updates_after_an_inference PASSED")
        .contains("test_docs_page_renders_the_openapi_document PASSED")
        .doesNotContain("SKIPPED");
  }
}
