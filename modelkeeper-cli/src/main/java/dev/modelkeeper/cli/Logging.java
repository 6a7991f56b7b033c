package dev.modelkeeper.cli;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.joran.JoranConfigurator;
import ch.qos.logback.core.joran.spi.JoranException;
import java.net.URL;
import java.util.Locale;
import org.slf4j.LoggerFactory;
import org.slf4j.bridge.SLF4JBridgeHandler;

/**
 * The one log stream of the process: logback on stderr, fed by slf4j (Jetty, Javalin), by {@code
 * System.Logger} (ModelKeeper's libraries, through {@code slf4j-jdk-platform-logging}) and by
 * java.util.logging (ONNX Runtime, through {@code jul-to-slf4j}). Thread-safe; meant to be called
 * once at startup.
 */
final class Logging {

  /** How each log event is written. */
  enum Format {
    /** {@code 2025-01-01T12:00:00.000+00:00 INFO [thread] logger - message}, for people. */
    TEXT("logback.xml"),
    /** One JSON object per line, for log shippers. */
    JSON("dev/modelkeeper/cli/logback-json.xml");

    private final String resource;

    Format(String resource) {
      this.resource = resource;
    }

    /** {@code text} or {@code json}, any case. */
    static Format parse(String value) {
      try {
        return valueOf(value.trim().toUpperCase(Locale.ROOT));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("'" + value + "' is not a log format (text, json)", e);
      }
    }
  }

  private Logging() {}

  /** Routes java.util.logging into slf4j; idempotent. */
  static synchronized void bridgeJavaUtilLogging() {
    if (!SLF4JBridgeHandler.isInstalled()) {
      SLF4JBridgeHandler.removeHandlersForRootLogger();
      SLF4JBridgeHandler.install();
    }
  }

  /**
   * Writes every later log event in {@code format}. Leaves the configuration alone when the user
   * gave their own ({@code -Dlogback.configurationFile}).
   */
  static synchronized void configure(Format format) {
    bridgeJavaUtilLogging();
    if (System.getProperty("logback.configurationFile") != null
        || !(LoggerFactory.getILoggerFactory() instanceof LoggerContext)) {
      return;
    }
    LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
    URL config = Logging.class.getClassLoader().getResource(format.resource);
    if (config == null) {
      throw new IllegalStateException("missing log configuration " + format.resource);
    }
    context.reset();
    JoranConfigurator configurator = new JoranConfigurator();
    configurator.setContext(context);
    try {
      configurator.doConfigure(config);
    } catch (JoranException e) {
      throw new IllegalStateException("bad log configuration " + format.resource, e);
    }
  }
}
