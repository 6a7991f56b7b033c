class TritonPythonModel:
    def execute(self, requests):
        raise RuntimeError("cannot decode this image")
