"""A batching model: per row, the length and upper case of a BYTES element, and X doubled."""
import numpy as np

import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            text = pb_utils.get_input_tensor_by_name(request, "TEXT").as_numpy()
            x = pb_utils.get_input_tensor_by_name(request, "X").as_numpy()
            lengths = np.array([[len(t[0])] for t in text], dtype=np.int64)
            upper = np.array([[t[0].upper()] for t in text], dtype=np.object_)
            outputs = [pb_utils.Tensor("LENGTH", lengths), pb_utils.Tensor("UPPER", upper),
                       pb_utils.Tensor("DOUBLED", x * 2)]
            wanted = request.requested_output_names()
            responses.append(pb_utils.InferenceResponse(
                output_tensors=[o for o in outputs if not wanted or o.name() in wanted]))
        return responses
