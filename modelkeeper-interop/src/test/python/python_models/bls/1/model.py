"""Business logic scripting: the sum from an ONNX model (onnx_addsub), the difference from a
Python model (add_sub, awaited with async_exec); CALLEE names another model to call first, whose
error is returned as this model's."""
import numpy as np

import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    async def execute(self, requests):
        responses = []
        for request in requests:
            a = pb_utils.get_input_tensor_by_name(request, "INPUT0")
            b = pb_utils.get_input_tensor_by_name(request, "INPUT1")
            callee = pb_utils.get_input_tensor_by_name(request, "CALLEE").as_numpy()[0].decode()
            if callee:
                failed = pb_utils.InferenceRequest(
                    model_name=callee, requested_output_names=["OUTPUT0"], inputs=[a, b]).exec()
                if failed.has_error():
                    responses.append(pb_utils.InferenceResponse(error=failed.error()))
                    continue
            onnx = pb_utils.InferenceRequest(
                model_name="onnx_addsub", requested_output_names=["OUTPUT0"],
                inputs=[pb_utils.Tensor("INPUT0", a.as_numpy()), pb_utils.Tensor("INPUT1", b.as_numpy())]).exec()
            if onnx.has_error():
                raise pb_utils.TritonModelException(onnx.error().message())
            python = await pb_utils.InferenceRequest(
                model_name="add_sub", requested_output_names=["OUTPUT1"],
                inputs=[pb_utils.Tensor("INPUT0", a.as_numpy().astype(np.float32)),
                        pb_utils.Tensor("INPUT1", b.as_numpy().astype(np.float32))]).async_exec()
            if python.has_error():
                raise pb_utils.TritonModelException(python.error().message())
            responses.append(pb_utils.InferenceResponse(output_tensors=[
                pb_utils.Tensor("SUM", pb_utils.get_output_tensor_by_name(onnx, "OUTPUT0").as_numpy()),
                pb_utils.Tensor("DIFF", pb_utils.get_output_tensor_by_name(python, "OUTPUT1").as_numpy())]))
        return responses
