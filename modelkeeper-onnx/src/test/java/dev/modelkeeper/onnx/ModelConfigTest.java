package dev.modelkeeper.onnx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class ModelConfigTest {

  @Test
  void parse_missingNullAndUnknownKeys_takeTheDefaults() {
    assertThat(ModelConfig.parse("{}")).isEqualTo(ModelConfig.EMPTY);
    assertThat(ModelConfig.parse("{\"description\": null, \"labels\": null, \"x\": [1]}"))
        .isEqualTo(ModelConfig.EMPTY);
    assertThat(ModelConfig.parse("{\"labels\": [\"a\"], \"expected_size_bytes\": 0}"))
        .isEqualTo(new ModelConfig("", List.of("a"), 0));
  }

  @Test
  void toJson_readsBack() {
    ModelConfig c = new ModelConfig("d", List.of("x"), 7);
    assertThat(ModelConfig.parse(c.toJson())).isEqualTo(c);
    assertThat(ModelConfig.parse(ModelConfig.EMPTY.toJson())).isEqualTo(ModelConfig.EMPTY);
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "{\"description\": 5}|description",
        "{\"labels\": 3}|labels",
        "{\"labels\": [1, 2]}|labels[0]",
        "{\"labels\": [\"a\", true]}|labels[1]",
        "{\"expected_size_bytes\": \"12\"}|expected_size_bytes",
        "{\"expected_size_bytes\": 1.5}|expected_size_bytes",
        "{\"expected_size_bytes\": -2}|expected_size_bytes",
      })
  void parse_wrongType_namesTheKey(String json, String key) {
    assertThatThrownBy(() -> ModelConfig.parse(json))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("config key \"" + key + "\"")
        .satisfies(e -> assertThat(e.getMessage()).doesNotContain("java").doesNotContain("Coerc"));
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "[1]", "\"s\"", "{\"a\": 1,}", "{"})
  void parse_notAJsonObject_isRejected(String json) {
    assertThatThrownBy(() -> ModelConfig.parse(json)).isInstanceOf(IllegalArgumentException.class);
  }
}
