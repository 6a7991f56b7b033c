package dev.modelkeeper.cli;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.opentelemetry.exporter.internal.FailedExportException;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.common.export.HttpResponse;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.net.ConnectException;
import java.net.UnknownHostException;
import java.net.http.HttpTimeoutException;
import java.util.ArrayDeque;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** Failed span exports: one line naming the endpoint and the reason, then at most one a minute. */
class SpanExportReportTest {

  private final Logger logger = (Logger) LoggerFactory.getLogger(SpanExportReport.class);
  private final ListAppender<ILoggingEvent> log = new ListAppender<>();
  private final AtomicLong now = new AtomicLong();
  private final Queue<CompletableResultCode> results = new ArrayDeque<>();
  private final SpanExportReport report =
      new SpanExportReport(
          new SpanExporter() {
            @Override
            public CompletableResultCode export(Collection<SpanData> spans) {
              return results.remove();
            }

            @Override
            public CompletableResultCode flush() {
              return CompletableResultCode.ofSuccess();
            }

            @Override
            public CompletableResultCode shutdown() {
              return CompletableResultCode.ofSuccess();
            }
          },
          "http://collector:4318/v1/traces",
          now::get);

  @BeforeEach
  void capture() {
    log.start();
    logger.addAppender(log);
  }

  @AfterEach
  void release() {
    logger.detachAppender(log);
  }

  private void export(int spans, CompletableResultCode result) {
    results.add(result);
    report.export(Collections.nCopies(spans, null));
  }

  private List<String> lines() {
    return log.list.stream().map(e -> e.getLevel() + " " + e.getFormattedMessage()).toList();
  }

  @Test
  void unreachableCollector_oneLineWithoutStackTrace_thenAtMostOneAMinute_andOneWhenItAnswers() {
    ConnectException refused = new ConnectException();
    export(13, CompletableResultCode.ofExceptionalFailure(new RuntimeException(refused)));
    now.addAndGet(TimeUnit.SECONDS.toNanos(30));
    export(5, CompletableResultCode.ofExceptionalFailure(refused)); // within the minute: quiet
    assertThat(lines())
        .containsExactly(
            "WARN tracing: could not send 13 spans to http://collector:4318/v1/traces (connection"
                + " refused); spans are dropped until it answers (reported again at most once a"
                + " minute)");
    assertThat(log.list.get(0).getThrowableProxy()).isNull();

    now.addAndGet(TimeUnit.SECONDS.toNanos(31));
    export(2, CompletableResultCode.ofExceptionalFailure(refused));
    export(1, CompletableResultCode.ofSuccess());
    export(1, CompletableResultCode.ofSuccess());
    assertThat(lines())
        .hasSize(3)
        .endsWith(
            "WARN tracing: still cannot send spans to http://collector:4318/v1/traces (connection"
                + " refused); 20 dropped so far",
            "INFO tracing: spans reach http://collector:4318/v1/traces again (20 were dropped while"
                + " it could not be reached)");
  }

  @Test
  void reason_namesWhatFailedInWords() {
    assertThat(SpanExportReport.reason(new RuntimeException(new UnknownHostException("c"))))
        .isEqualTo("unknown host c");
    assertThat(SpanExportReport.reason(new HttpTimeoutException("request timed out")))
        .isEqualTo("timed out");
    assertThat(SpanExportReport.reason(new IllegalStateException("broken pipe")))
        .isEqualTo("broken pipe");
    assertThat(SpanExportReport.reason(null)).isEqualTo("the export failed");
    assertThat(
            SpanExportReport.reason(
                FailedExportException.httpFailedWithResponse(
                    new HttpResponse() {
                      @Override
                      public int getStatusCode() {
                        return 404;
                      }

                      @Override
                      public String getStatusMessage() {
                        return "Not Found";
                      }

                      @Override
                      public byte[] getResponseBody() {
                        return new byte[0];
                      }
                    })))
        .isEqualTo("the collector answered HTTP 404");
  }
}
