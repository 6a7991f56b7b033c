"""Business logic scripting: a flower's four measurements through the iris ONNX model."""
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            x = pb_utils.get_input_tensor_by_name(request, "MEASUREMENTS").as_numpy().reshape(1, 4)
            answer = pb_utils.InferenceRequest(
                model_name="iris", requested_output_names=["probabilities"],
                inputs=[pb_utils.Tensor("input", x)]).exec()
            if answer.has_error():
                raise pb_utils.TritonModelException(answer.error().message())
            p = pb_utils.get_output_tensor_by_name(answer, "probabilities").as_numpy().reshape(3)
            responses.append(pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor("PROBABILITIES", p)]))
        return responses
