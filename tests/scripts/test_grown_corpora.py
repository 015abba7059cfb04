#!/usr/bin/python3
"""tests/fuzz/grown/<target>.tar.xz, the inputs long fuzz runs found (scripts/fuzz.sh --update-grown,
docs/reliability.md "Grown corpora"): each archive belongs to a fuzz target, holds only regular files (no directory
entry, mode 0644, owner 0, time 0) named by the SHA-1 of their content (libFuzzer's names, so two archives of the
same inputs are the same), none longer than the target's -max_len, none a copy of a seed the repository already
has, and is byte-identical when tests/fuzz/pack_grown.sh (what fuzz.sh writes it with) packs its inputs again,
under any umask. Whether each input runs clean is the fuzz step of .ci/run: it replays every one before fuzzing."""
import hashlib
import os
import re
import subprocess
import tarfile
import tempfile
import unittest

ROOT = os.environ["PEVP_SOURCE_DIR"]
GROWN = os.path.join(ROOT, "tests", "fuzz", "grown")
SEEDS = os.path.join(ROOT, "tests", "fuzz", "corpus")
FUZZ_SH = os.path.join(ROOT, "scripts", "fuzz.sh")
PACK = os.path.join(ROOT, "tests", "fuzz", "pack_grown.sh")


def max_len(target):
    """The -max_len fuzz.sh gives the target, from its max_len_of (one source of truth)."""
    text = open(FUZZ_SH).read()
    body = text[text.index("max_len_of() {"):]
    body = body[:body.index("\n}\n")]
    for line in body.splitlines():
        m = re.match(r"\s*([a-z |]+)\) echo (\d+) ;;", line)
        if m and target in [t.strip() for t in m.group(1).split("|")]:
            return int(m.group(2))
    raise AssertionError(f"fuzz.sh gives no -max_len for {target}")


class GrownCorpora(unittest.TestCase):
    def archives(self):
        names = sorted(n for n in os.listdir(GROWN) if n.endswith(".tar.xz"))
        self.assertTrue(names, "no grown corpus")
        return names

    def test_every_archive_holds_content_named_inputs_of_its_target(self):
        for name in self.archives():
            target = name[: -len(".tar.xz")]
            with self.subTest(target=target):
                self.assertTrue(os.path.isdir(os.path.join(SEEDS, target)), f"{name}: no fuzz target {target}")
                limit = max_len(target)
                seeds = {open(os.path.join(SEEDS, target, s), "rb").read() for s in os.listdir(os.path.join(SEEDS, target))}
                with tarfile.open(os.path.join(GROWN, name), "r:xz") as tar:
                    members = tar.getmembers()
                    self.assertGreater(len(members), 0)
                    self.assertEqual([m.name for m in members], sorted(m.name for m in members))
                    for m in members:
                        self.assertTrue(m.isfile(), f"{m.name}: not a regular file")
                        self.assertEqual((m.uid, m.gid, m.mtime, m.mode), (0, 0, 0, 0o644), m.name)
                        data = tar.extractfile(m).read()
                        self.assertEqual(m.name, hashlib.sha1(data).hexdigest(), "not named by its SHA-1")
                        self.assertLessEqual(len(data), limit, m.name)
                        self.assertNotIn(data, seeds, f"{m.name}: a copy of a seed")

    def test_packing_the_inputs_again_gives_the_same_bytes(self):
        for name in self.archives():
            for umask in (0o022, 0o077, 0o002):
                with self.subTest(name=name, umask=oct(umask)), tempfile.TemporaryDirectory() as tmp:
                    inputs = os.path.join(tmp, "inputs")
                    again = os.path.join(tmp, "again.tar.xz")
                    old = os.umask(umask)
                    try:
                        os.mkdir(inputs)
                        subprocess.run(["tar", "-xJf", os.path.join(GROWN, name), "-C", inputs], check=True)
                        subprocess.run([PACK, inputs, again], check=True)
                    finally:
                        os.umask(old)
                    self.assertEqual(open(again, "rb").read(), open(os.path.join(GROWN, name), "rb").read())


if __name__ == "__main__":
    unittest.main()
