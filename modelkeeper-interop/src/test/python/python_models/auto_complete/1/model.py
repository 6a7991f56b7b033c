"""Declares its tensors in auto_complete_config; config.pbtxt names only the backend."""
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    @staticmethod
    def auto_complete_config(auto_complete_model_config):
        auto_complete_model_config.add_input({"name": "IN", "data_type": "TYPE_FP32", "dims": [3]})
        auto_complete_model_config.add_output({"name": "OUT", "data_type": "TYPE_FP32", "dims": [3]})
        return auto_complete_model_config

    def execute(self, requests):
        return [pb_utils.InferenceResponse(output_tensors=[
            pb_utils.Tensor("OUT", -pb_utils.get_input_tensor_by_name(r, "IN").as_numpy())])
            for r in requests]
