"""The class fixture of the binding tests that share one tiny model: VKLLM_TEST_MODEL (set by
ctest) opened on a runtime of its own, and a short prompt. Without the variable the tests fail
rather than skip."""

import os

import vkllm


def open_tiny_model(cls):
    cls.path = os.environ.get("VKLLM_TEST_MODEL")
    if not cls.path:
        raise AssertionError("VKLLM_TEST_MODEL is not set (the tiny model for the tests)")
    cls.runtime = vkllm.Runtime()
    cls.model = vkllm.Model(cls.runtime, cls.path)
    cls.prompt = cls.model.tokenize("Hello world")


def close_tiny_model(cls):
    cls.model.close()
    cls.runtime.close()
