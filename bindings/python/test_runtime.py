"""The runtime through the ctypes bindings: the version, devices and their cooperative-matrix
report, the self-check under validation, and errors with their status and message (run by ctest
as Python.Bindings, which sets VKLLM_LIBRARY and VKLLM_TEST_MODEL, a tiny model file)."""

import contextlib
import ctypes
import os
import unittest

import vkllm


@contextlib.contextmanager
def _environment(name, value):
    """The variable set to value for the block, then as it was."""
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            del os.environ[name]
        else:
            os.environ[name] = old


class RuntimeTest(unittest.TestCase):
    def test_version_is_the_library_version(self):
        self.assertEqual(vkllm.version().split(".")[0], str(vkllm.VERSION_MAJOR))

    def test_devices_have_names_and_limits(self):
        devs = vkllm.devices()
        self.assertGreaterEqual(len(devs), 1)
        self.assertTrue(devs[0].name)
        self.assertGreaterEqual(devs[0].max_storage_buffer_range, 1 << 27)

    def test_devices_say_whether_prefill_runs_on_cooperative_matrices(self):
        # The struct as the C header lays it out (x86-64 and aarch64: LP64; test_ffi_layout
        # compares every struct with the C compiler's layout on any target).
        self.assertEqual(ctypes.sizeof(vkllm.DeviceInfo), 2120)
        self.assertEqual(vkllm._ffi.vkllm_device_info.cooperative_matrix.offset, 1052)
        self.assertEqual(vkllm._ffi.vkllm_device_info.coopmat_shapes.offset, 1092)
        for d in vkllm.devices():
            self.assertIsInstance(d.cooperative_matrix, vkllm.CoopmatUse)
            self.assertEqual(len(d.coopmat_shapes), d.coopmat_shape_count)
            self.assertLessEqual(d.coopmat_shape_count, vkllm.MAX_COOPMAT_SHAPES)
            if d.cooperative_matrix == vkllm.CoopmatUse.ABSENT:
                self.assertEqual(d.coopmat_shapes, [])
            if d.cooperative_matrix == vkllm.CoopmatUse.USED:
                # The kernels' shape is one the device lists: f16 operands, f32 accumulator.
                self.assertIn(str(d.coopmat_shape), [str(s) for s in d.coopmat_shapes])
                self.assertEqual(str(d.coopmat_shape).split(" ", 1)[1], "f16*f16+f32->f32")
            for s in d.coopmat_shapes:
                self.assertRegex(str(s), r"^\d+x\d+x\d+ \w+\*\w+\+\w+->\w+")

    def test_the_mask_hides_cooperative_matrices_from_every_device(self):
        if not any(d.coopmat_shape_count for d in vkllm.devices()):
            self.skipTest("no device here offers VK_KHR_cooperative_matrix (Mesa 26 does)")
        with _environment("VKLLM_VULKAN_MASK_FEATURES", "VK_KHR_cooperative_matrix"):
            for d in vkllm.devices():
                self.assertEqual(d.cooperative_matrix, vkllm.CoopmatUse.ABSENT)
                self.assertEqual(d.coopmat_shapes, [])

    def test_a_misspelt_vkllm_coopmat_is_refused_naming_its_values(self):
        with _environment("VKLLM_COOPMAT", "yes"):
            for make in (vkllm.devices, vkllm.Runtime):
                with self.assertRaises(vkllm.Error) as cm:
                    make()
                self.assertEqual(cm.exception.code, vkllm.ERR_INVALID_ARGUMENT)
                self.assertIn('VKLLM_COOPMAT is "yes"', cm.exception.message)
                self.assertIn("auto, on or off", cm.exception.message)

    def test_runtime_self_check_passes_under_validation(self):
        errors = []
        with vkllm.Runtime(validation=True, log=lambda lvl, m: errors.append(m) if lvl == 3 else None) as rt:
            r = rt.self_check()
            self.assertGreaterEqual(r.kernels_checked, 12)
            self.assertEqual(r.kernels_failed, 0, r.first_failure)
            self.assertEqual(rt.stats().validation_errors, 0, errors[:1])
            self.assertGreater(rt.stats().pipeline_compile_ms, 0)

    def test_errors_carry_status_and_message(self):
        with self.assertRaises(vkllm.Error) as cm:
            vkllm.Runtime(device=999)
        self.assertEqual(cm.exception.code, vkllm.ERR_NO_DEVICE)
        self.assertIn("999", cm.exception.message)


if __name__ == "__main__":
    unittest.main()
