"""Runtime.tune (issue 39) on the tiny model VKLLM_TEST_MODEL, under the validation layer: what it
reports, the tune file it keeps beside the pipeline cache, a later runtime reading it, and
greedy tokens unchanged by the variants it picks (run by ctest, which sets VKLLM_LIBRARY and
VKLLM_TEST_MODEL)."""

import ctypes
import os
import tempfile
import unittest

import vkllm

STEPS = 16
LOG_INFO, LOG_ERROR = 1, 3  # vkllm_log_level


class TuneTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.path = os.environ.get("VKLLM_TEST_MODEL")
        if not cls.path:
            raise AssertionError("VKLLM_TEST_MODEL is not set (the tiny model for the tests)")

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.cache = os.path.join(self.dir.name, "pipelines.bin")
        self.errors = []
        self.info = []

    def tearDown(self):
        self.dir.cleanup()

    def log(self, level, message):
        if level == LOG_ERROR:
            self.errors.append(message)
        if level == LOG_INFO:
            self.info.append(message)

    def runtime(self, pipeline_cache=None):
        return vkllm.Runtime(validation=True, pipeline_cache=pipeline_cache, log=self.log)

    def greedy(self, model):
        with vkllm.Session(model, n_ctx=64) as s:
            return s.generate_batch([model.tokenize("Hello world")], max_tokens=STEPS,
                                    ignore_eog=True)[0]

    def test_the_structs_are_laid_out_as_the_header(self):
        # x86-64 and aarch64 (LP64): tuned_shapes appended after pipeline_compile_ms.
        self.assertEqual(vkllm.RuntimeStats.tuned_shapes.offset, 64)
        self.assertEqual(ctypes.sizeof(vkllm.RuntimeStats), 72)
        self.assertEqual(vkllm.TuneResult.default_us.offset, 24)
        self.assertEqual(vkllm.TuneResult.file_written.offset, 48)
        self.assertEqual(ctypes.sizeof(vkllm.TuneResult), 56)

    def test_tune_times_every_shape_and_keeps_the_winners_in_the_tune_file(self):
        with self.runtime(self.cache) as rt, vkllm.Model(rt, self.path) as model:
            self.assertEqual(rt.stats().tuned_shapes, 0)
            before = self.greedy(model)
            r = rt.tune(model)
            self.assertGreater(r.shapes, 0)
            self.assertGreaterEqual(r.candidates_timed, r.shapes)
            self.assertEqual(r.candidates_rejected, 0)
            self.assertLessEqual(r.shapes_changed, r.shapes)
            # Times are noisy: only that both were measured.
            self.assertGreater(r.default_us, 0)
            self.assertGreater(r.tuned_us, 0)
            self.assertGreater(r.elapsed_ms, 0)
            self.assertEqual(r.file_written, 1)
            self.assertTrue(os.path.isfile(self.cache + ".tune"))
            self.assertGreater(rt.stats().tuned_shapes, 0)
            # What each shape tried and picked went to the log at INFO.
            self.assertGreaterEqual(len(self.info), r.shapes, self.info[:3])
            # A session created after tuning runs the winners: the same greedy tokens.
            self.assertEqual(self.greedy(model), before)
            self.assertEqual(rt.stats().validation_errors, 0, self.errors[:1])
        # A new runtime with the same cache reads the tune file at create.
        with self.runtime(self.cache) as rt, vkllm.Model(rt, self.path) as model:
            self.assertGreater(rt.stats().tuned_shapes, 0)
            self.assertEqual(self.greedy(model), before)
            self.assertEqual(rt.stats().validation_errors, 0, self.errors[:1])

    def test_tune_without_a_pipeline_cache_writes_no_file_but_uses_the_winners(self):
        with self.runtime() as rt, vkllm.Model(rt, self.path) as model:
            r = rt.tune(model)
            self.assertGreater(r.shapes, 0)
            self.assertEqual(r.file_written, 0)
            self.assertGreater(rt.stats().tuned_shapes, 0)
            self.assertEqual(os.listdir(self.dir.name), [])

    def test_tune_refuses_no_model_a_closed_one_and_another_runtimes(self):
        with self.runtime() as rt, self.runtime() as other:
            closed = vkllm.Model(rt, self.path)
            closed.close()
            with vkllm.Model(other, self.path) as foreign:
                for bad in (None, closed, foreign):
                    with self.assertRaises(vkllm.Error) as cm:
                        rt.tune(bad)
                    self.assertEqual(cm.exception.code, vkllm.ERR_INVALID_ARGUMENT)
            self.assertEqual(rt.stats().tuned_shapes, 0)
            self.assertEqual(rt.stats().validation_errors, 0, self.errors[:1])


if __name__ == "__main__":
    unittest.main()
