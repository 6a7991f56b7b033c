import time


class TritonPythonModel:
    def execute(self, requests):
        time.sleep(3600)
