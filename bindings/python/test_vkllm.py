"""Tests of the ctypes bindings against the built library (run by ctest)."""

import unittest

import vkllm


class BindingTest(unittest.TestCase):
    def test_version_is_the_library_version(self):
        self.assertEqual(vkllm.version().split(".")[0], str(vkllm.VERSION_MAJOR))

    def test_devices_have_names_and_limits(self):
        devs = vkllm.devices()
        self.assertGreaterEqual(len(devs), 1)
        self.assertTrue(devs[0].name)
        self.assertGreaterEqual(devs[0].max_storage_buffer_range, 1 << 27)

    def test_runtime_self_check_passes_under_validation(self):
        errors = []
        with vkllm.Runtime(validation=True, log=lambda lvl, m: errors.append(m) if lvl == 3 else None) as rt:
            r = rt.self_check()
            self.assertGreaterEqual(r.kernels_checked, 12)
            self.assertEqual(r.kernels_failed, 0, r.first_failure)
            self.assertEqual(rt.stats().validation_errors, 0, errors[:1])

    def test_errors_carry_status_and_message(self):
        with self.assertRaises(vkllm.Error) as cm:
            vkllm.Runtime(device=999)
        self.assertEqual(cm.exception.code, vkllm.ERR_NO_DEVICE)
        self.assertIn("999", cm.exception.message)


if __name__ == "__main__":
    unittest.main()
