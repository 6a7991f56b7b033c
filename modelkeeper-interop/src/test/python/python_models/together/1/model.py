"""Batched requests arrive together: each answer says how many requests its execute call had.
Each call takes 100 ms, so that requests sent meanwhile queue."""
import time

import numpy as np

import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        n = len(requests)
        time.sleep(0.1)
        responses = []
        for r in requests:
            x = pb_utils.get_input_tensor_by_name(r, "IN").as_numpy()
            responses.append(pb_utils.InferenceResponse(output_tensors=[
                pb_utils.Tensor("OUT", x),
                pb_utils.Tensor("REQUESTS", np.full((x.shape[0], 1), n, dtype=np.int64))]))
        return responses
