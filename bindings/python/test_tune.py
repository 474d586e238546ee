"""Runtime.tune (issue 39) on the tiny model VKLLM_TEST_MODEL, under the validation layer: what it
reports, the tune file it keeps beside the pipeline cache, a later runtime reading it, and
greedy tokens unchanged by the variants it picks (run by ctest, which sets VKLLM_LIBRARY and
VKLLM_TEST_MODEL)."""

import ctypes
import os
import re
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
            # Every shape runs its winner, the default variant or not.
            self.assertEqual(rt.stats().tuned_shapes, r.shapes)
            # What each shape tried, with times, and what it picked went to the log at INFO.
            picks = [m for m in self.info if re.search(r"\): picked .*: [0-9.]+ us", m)]
            timed = [m for m in self.info if re.search(r"\):   .* [0-9.]+ us", m)]
            self.assertEqual(len(picks), r.shapes, self.info[:3])
            self.assertEqual(len(timed), r.candidates_timed, self.info[:3])
            # A session created after tuning runs the winners: the same greedy tokens.
            self.assertEqual(self.greedy(model), before)
            self.assertEqual(rt.stats().validation_errors, 0, self.errors[:1])
        # A new runtime with the same cache reads the tune file at create.
        with self.runtime(self.cache) as rt, vkllm.Model(rt, self.path) as model:
            self.assertEqual(rt.stats().tuned_shapes, r.shapes)
            self.assertEqual(self.greedy(model), before)
            self.assertEqual(rt.stats().validation_errors, 0, self.errors[:1])

    def test_other_variants_from_a_tune_file_change_no_greedy_token(self):
        # On lavapipe the defaults usually win, so the winners alone may change nothing: the
        # tune file is rewritten to name, for every shape, the slowest other candidate the
        # tuner timed (and checked) on this device, and a runtime reading it must generate the
        # same greedy tokens as one without it.
        with self.runtime(self.cache) as rt, vkllm.Model(rt, self.path) as model:
            before = self.greedy(model)
            shapes = rt.tune(model).shapes
        candidates = {}  # "F32 256x384" -> [(us, "wg=8 rows=4 subgroup=1"), ...] not default
        for m in self.info:
            c = re.match(r"tune: \w+ (\S+ \d+x\d+) \(\d+ per step\):   wg=(\d+) rows=(\d+) "
                         r"(subgroup|shared) +([0-9.]+) us$", m)
            if c:
                variant = f"wg={c[2]} rows={c[3]} subgroup={int(c[4] == 'subgroup')}"
                candidates.setdefault(c[1], []).append((float(c[5]), variant))
        with open(self.cache + ".tune") as f:
            lines = f.read().splitlines()
        entries = [line for line in lines if line.startswith("matvec ")]
        self.assertEqual(len(entries), shapes)
        rewritten = []
        for entry in entries:
            _, family, wtype, rows, cols, *_ = entry.split(" ")
            others = candidates.get(f"{wtype} {rows}x{cols}")
            self.assertTrue(others, f"no other candidate timed for {entry}")
            rewritten.append(f"matvec {family} {wtype} {rows} {cols} {max(others)[1]}")
        self.assertNotEqual(rewritten, entries)
        with open(self.cache + ".tune", "w") as f:
            f.write("\n".join(lines[:4] + rewritten + [lines[-1]]) + "\n")
        warnings = []
        with vkllm.Runtime(validation=True, pipeline_cache=self.cache,
                           log=lambda level, m: warnings.append(m) if level >= 2 else None) as rt, \
                vkllm.Model(rt, self.path) as model:
            self.assertEqual(rt.stats().tuned_shapes, shapes, warnings[:1])
            self.assertEqual(self.greedy(model), before)
            self.assertEqual(rt.stats().validation_errors, 0, warnings[:1])

    def test_tune_without_a_pipeline_cache_writes_no_file_but_uses_the_winners(self):
        with self.runtime() as rt, vkllm.Model(rt, self.path) as model:
            r = rt.tune(model)
            self.assertGreater(r.shapes, 0)
            self.assertEqual(r.file_written, 0)
            self.assertEqual(rt.stats().tuned_shapes, r.shapes)
            self.assertEqual(os.listdir(self.dir.name), [])

    def test_an_unwritable_tune_file_raises_an_io_error_and_the_winners_stay_in_use(self):
        cache = os.path.join(self.dir.name, "missing", "pipelines.bin")
        with self.runtime(cache) as rt, vkllm.Model(rt, self.path) as model:
            with self.assertRaises(vkllm.Error) as cm:
                rt.tune(model)
            self.assertEqual(cm.exception.code, vkllm.ERR_IO)
            self.assertIn(cache + ".tune", cm.exception.message)
            self.assertGreater(rt.stats().tuned_shapes, 0)

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
