"""`pe-vp qemu-device` as a user runs it, with fake_qemu.py as the QEMU it starts: the descriptors and arguments it
appends, the doorbell greeting, the config probe and BAR accesses, an interrupt, QEMU's exit status passed on, the
statistics written; and its usage errors. PEVP_BIN names pe-vp."""
import json
import os
import signal
import subprocess
import tempfile
import unittest

PEVP = os.environ["PEVP_BIN"]
HERE = os.path.dirname(os.path.abspath(__file__))


class QemuDeviceCommand(unittest.TestCase):
    def test_serves_the_qemu_it_starts_and_exits_with_its_status(self):
        with tempfile.TemporaryDirectory() as tmp:
            stats_path = os.path.join(tmp, "stats.json")
            trace_path = os.path.join(tmp, "trace.json")
            p = subprocess.run([PEVP, "qemu-device", "--stats-json", stats_path, "--trace", trace_path, "--",
                                "/usr/bin/python3", os.path.join(HERE, "fake_qemu.py")],
                               capture_output=True, text=True, timeout=120)
            self.assertNotIn("FAIL", p.stdout, p.stdout + p.stderr)
            self.assertEqual(p.returncode, 7, p.stdout + p.stderr)  # fake_qemu.py's own status
            self.assertIn("fake_qemu: vector 0 signals = 0x1", p.stdout)
            self.assertIn("QEMU exited with status 7", p.stderr)
            with open(stats_path) as f:
                pcie = json.load(f)["pcie"]
            # 1 read (dma_id) and 1 + 8 writes (irq_enable, the record) on BAR0; the record reached the SEQ.
            self.assertEqual(pcie["bars"]["bar0"]["reads"], 1)
            self.assertEqual(pcie["bars"]["bar0"]["writes"], 9)
            self.assertEqual(pcie["bars"]["bar0"]["bytes"], 2 << 20)
            self.assertEqual(pcie["interrupts"]["seq_vector"], 1)
            self.assertEqual(pcie["link"]["messages"]["PCI_CFGREAD"], 3)
            self.assertEqual(pcie["link"]["malformed"], 0)
            with open(trace_path) as f:
                events = json.load(f)["traceEvents"]
            names = {e.get("args", {}).get("name") for e in events if e.get("ph") == "M"}
            self.assertIn("BAR0 registers", names)
            self.assertTrue(any(e.get("name") == "R 0x100000" for e in events))

    def test_sigterm_ends_qemu_then_pe_vp(self):
        env = dict(os.environ, FAKE_QEMU_WAIT="1")
        p = subprocess.Popen([PEVP, "qemu-device", "--", "/usr/bin/python3", os.path.join(HERE, "fake_qemu.py")],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        for line in p.stdout:
            if "fake_qemu: waiting" in line or "FAIL" in line:
                break
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=60)
        # pe-vp passed SIGTERM on to its QEMU, which the signal ended: 128 + 15.
        self.assertEqual(p.returncode, 128 + signal.SIGTERM, err)
        self.assertIn("QEMU was killed by signal Terminated", err)

    def test_usage_errors_are_status_2_and_name_the_rule(self):
        p = subprocess.run([PEVP, "qemu-device"], capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 2)
        self.assertIn("give QEMU's command line after -- , or both --proxy-fd and --ivshmem-fd", p.stderr)
        p = subprocess.run([PEVP, "qemu-device", "--proxy-fd", "0", "--ivshmem-fd", "1"], stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 2)
        self.assertIn("--proxy-fd 0 is not an open socket", p.stderr)

    def test_a_qemu_that_cannot_start_is_reported(self):
        p = subprocess.run([PEVP, "qemu-device", "--", "/nonexistent/qemu"], capture_output=True, text=True,
                           timeout=60)
        self.assertEqual(p.returncode, 127, p.stderr)
        self.assertIn("cannot start QEMU: /nonexistent/qemu", p.stderr)


if __name__ == "__main__":
    unittest.main()
