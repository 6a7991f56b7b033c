package dev.modelkeeper.onnx;

import static org.assertj.core.api.Assertions.assertThat;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtSession;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The warm-up model is a valid ONNX model that ONNX Runtime loads and runs: y = x. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class OnnxRuntimeStateTest {

  @Test
  void identityModel_loadsAndReturnsItsInput() throws Exception {
    OnnxRuntimeState.ensureStarted();
    OrtEnvironment env = OnnxRuntimeState.environment();
    try (OrtSession.SessionOptions opts = new OrtSession.SessionOptions();
        OrtSession session = env.createSession(OnnxRuntimeState.identityModel(), opts);
        OnnxTensor x = OnnxTensor.createTensor(env, new float[] {4.5f});
        OrtSession.Result result = session.run(Map.of("x", x))) {
      assertThat(session.getInputNames()).containsExactly("x");
      assertThat((float[]) result.get("y").orElseThrow().getValue()).containsExactly(4.5f);
    }
  }
}
