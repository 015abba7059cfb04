#!/usr/bin/python3
"""tests/fuzz/grown/<target>.tar.xz, the inputs long fuzz runs found (scripts/fuzz.sh --update-grown,
docs/reliability.md "Grown corpora"): each archive belongs to a fuzz target, holds only regular files named by the
SHA-1 of their content (libFuzzer's names, so two archives of the same inputs are the same), none longer than the
target's -max_len, none a copy of a seed the repository already has, and is byte-identical when written again from
its own inputs the way fuzz.sh writes it. Whether each input runs clean is the fuzz step of .ci/run: it replays
every one before fuzzing."""
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
                    members = [m for m in tar.getmembers() if m.name not in (".", "./")]
                    self.assertGreater(len(members), 0)
                    for m in members:
                        self.assertTrue(m.isfile(), f"{m.name}: not a regular file")
                        self.assertEqual((m.uid, m.gid, m.mtime), (0, 0, 0), m.name)
                        data = tar.extractfile(m).read()
                        self.assertEqual(m.name, "./" + hashlib.sha1(data).hexdigest(), "not named by its SHA-1")
                        self.assertLessEqual(len(data), limit, m.name)
                        self.assertNotIn(data, seeds, f"{m.name}: a copy of a seed")

    def test_writing_an_archive_again_gives_the_same_bytes(self):
        for name in self.archives():
            with self.subTest(name=name), tempfile.TemporaryDirectory() as tmp:
                subprocess.run(["tar", "-xJf", os.path.join(GROWN, name), "-C", tmp], check=True)
                again = os.path.join(tmp, "again.tar.xz")
                inputs = os.path.join(tmp, "inputs")
                os.mkdir(inputs)
                for f in os.listdir(tmp):
                    if f not in ("inputs", "again.tar.xz"):
                        os.rename(os.path.join(tmp, f), os.path.join(inputs, f))
                subprocess.run(["tar", "--sort=name", "--owner=0", "--group=0", "--numeric-owner", "--mtime=@0",
                                "-cJf", again, "-C", inputs, "."], check=True)
                self.assertEqual(open(again, "rb").read(), open(os.path.join(GROWN, name), "rb").read())


if __name__ == "__main__":
    unittest.main()
