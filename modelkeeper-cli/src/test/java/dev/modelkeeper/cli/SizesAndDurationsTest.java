package dev.modelkeeper.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Sizes such as 512MB or 4GiB and durations such as 30s or PT1M. */
class SizesAndDurationsTest {

  @Test
  void parse_decimalAndBinaryUnits_giveBytes() {
    assertThat(Sizes.parse("512MB")).isEqualTo(512_000_000L);
    assertThat(Sizes.parse("4GiB")).isEqualTo(4L << 30);
    assertThat(Sizes.parse("1.5 kib")).isEqualTo(1536);
    assertThat(Sizes.parse("2048")).isEqualTo(2048);
    assertThat(Sizes.parse("0")).isZero();
    assertThat(Sizes.parse("7b")).isEqualTo(7);
    assertThat(Sizes.parse("1TB")).isEqualTo(1_000_000_000_000L);
  }

  @Test
  void parse_badSizes_throwWithHint() {
    assertThatThrownBy(() -> Sizes.parse("lots")).hasMessageContaining("512MB");
    assertThatThrownBy(() -> Sizes.parse("4GB!")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> Sizes.parse("3 parsecs")).hasMessageContaining("unknown unit");
    assertThatThrownBy(() -> Sizes.parse("-1MB")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> Sizes.parse("99999999999TiB")).hasMessageContaining("too large");
  }

  @Test
  void format_sizes_useBinaryUnits() {
    assertThat(Sizes.format(4L << 30)).isEqualTo("4 GiB");
    assertThat(Sizes.format(1536)).isEqualTo("1.5 KiB");
    assertThat(Sizes.format(999)).isEqualTo("999 B");
  }

  @Test
  void parse_durations_acceptUnitsIsoAndSeconds() {
    assertThat(Durations.parse("30s")).isEqualTo(Duration.ofSeconds(30));
    assertThat(Durations.parse("500ms")).isEqualTo(Duration.ofMillis(500));
    assertThat(Durations.parse("2m")).isEqualTo(Duration.ofMinutes(2));
    assertThat(Durations.parse("1h")).isEqualTo(Duration.ofHours(1));
    assertThat(Durations.parse("PT1M30S")).isEqualTo(Duration.ofSeconds(90));
    assertThat(Durations.parse("45")).isEqualTo(Duration.ofSeconds(45));
    assertThat(Durations.parse("1.5s")).isEqualTo(Duration.ofMillis(1500));
    assertThat(Durations.parse("250us")).isEqualTo(Duration.ofNanos(250_000));
    assertThat(Durations.parse("0.5ms")).isEqualTo(Duration.ofNanos(500_000));
  }

  @Test
  void parse_badDurations_throwWithHint() {
    assertThatThrownBy(() -> Durations.parse("soon")).hasMessageContaining("30s");
    assertThatThrownBy(() -> Durations.parse("PTX")).hasMessageContaining("not a duration");
    assertThatThrownBy(() -> Durations.parse("5 days"))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
