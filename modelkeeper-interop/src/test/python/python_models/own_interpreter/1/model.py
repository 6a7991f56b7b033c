"""Run by the interpreter its config.pbtxt names (PythonBackendTest writes the config): a wrapper
that sets MODELKEEPER_OWN_INTERPRETER, so the answer says which interpreter ran it."""
import os

import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        factor = 2 if os.environ.get("MODELKEEPER_OWN_INTERPRETER") == "1" else 1
        return [pb_utils.InferenceResponse(output_tensors=[
            pb_utils.Tensor("OUT", pb_utils.get_input_tensor_by_name(r, "IN").as_numpy() * factor)])
            for r in requests]
