"""Files the user names, through the pe-vp binary (docs/reliability.md, "output files", "input files", "host memory"):
descriptor names (/dev/stdout, /dev/fd/N) written in place at their position; the temporary file of an atomic
replacement never a planted symlink; every input read only up to its kind's limit (/dev/zero, a sparse file); an
allocation failure reported as out of host memory; two spellings of one output file refused; empty paths refused
naming the option; long .npy header parts cut; gemm's outputs checked before the simulation; a read-only output
refused. Run with /usr/bin/python3 (ctest: cli.files)."""
import os
import resource
import shutil
import stat
import subprocess
import tempfile
import threading
import time
import unittest

PEVP = os.environ["PEVP_BIN"]
EXAMPLE = os.environ["PEVP_EXAMPLE"]  # platform/examples/single_matmul
ENV = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1", OPENBLAS_NUM_THREADS="1")
GEMM = ["gemm", "--m", "32", "--k", "32", "--n", "32", "--no-check", "--quiet", "--threads", "1"]
RUN = ["run", "--gen", "MARIANA", os.path.join(EXAMPLE, "program.pes"),
       "--load", os.path.join(EXAMPLE, "st.npy") + "@0x0:bf16", "--load", os.path.join(EXAMPLE, "mv.npy") + "@0x1000:bf16"]
DUMP = "0x2000000:32x48:fp32="


def run(args, cwd, timeout=120, **kw):
    kw.setdefault("stdout", subprocess.PIPE)
    return subprocess.run([PEVP, *args], cwd=cwd, env=ENV, stderr=subprocess.PIPE, timeout=timeout, **kw)


def read(path, mode="rb"):
    with open(path, mode) as f:
        return f.read()


def npy_bytes(header_dict, data=b""):
    """A version 1.0 .npy file with the given header dict text (padded as numpy pads) and data."""
    header = header_dict.encode()
    total = (10 + len(header) + 1 + 63) // 64 * 64
    header += b" " * (total - 10 - len(header) - 1) + b"\n"
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + data


# Runs argv[2:] as a child of a fresh, small interpreter and writes that child's peak RSS (KiB) to fd argv[1]. A child
# started straight from this test process would not do: Python starts it with vfork, so the peak it reports counts
# this process's own high-water mark (a test's buffers) before the exec.
PEAK_RSS_WRAPPER = """
import os, sys
fd = int(sys.argv[1])
pid = os.fork()
if pid == 0:
    os.close(fd)
    os.execv(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
os.write(fd, str(usage.ru_maxrss).encode())
sys.exit(os.waitstatus_to_exitcode(status) % 256 if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))
"""


def sanitized():
    """AddressSanitizer reserves terabytes of address space: an address-space limit cannot apply to it."""
    with open(PEVP, "rb") as f:
        return b"__asan_init" in f.read()


class Files(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="pevp_cli_files_")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.dir, name)

    # 1. /dev/stdout, /dev/fd/N: the open descriptor, written where it stands.
    def test_descriptor_names_are_written_in_place(self):
        piped = run(["asm", "--gen", "MARIANA", os.path.join(EXAMPLE, "program.pes"), "-o", "/dev/stdout"], self.dir)
        self.assertEqual(piped.returncode, 0, piped.stderr)
        self.assertNotIn(b"temporary", piped.stderr)
        plain = run(["asm", "--gen", "MARIANA", os.path.join(EXAMPLE, "program.pes"), "-o", "x.bin"], self.dir)
        self.assertEqual(plain.returncode, 0, plain.stderr)
        records = read(self.path("x.bin"))
        self.assertGreater(len(records), 0)
        self.assertTrue(piped.stdout.startswith(records + b"pe-vp asm: wrote"), piped.stdout[-100:])

        stats = run(GEMM + ["--stats-json", "/dev/stdout"], self.dir)
        self.assertEqual(stats.returncode, 0, stats.stderr)
        self.assertIn(b'"cycles"', stats.stdout)

        log = self.path("log.txt")
        with open(log, "wb") as f:
            f.write(b"IMPORTANT\n")
        inode = os.stat(log).st_ino
        with open(log, "ab") as f:  # the shell's >>
            r = run(GEMM + ["--stats-json", "/dev/stdout"], self.dir, stdout=f)
        self.assertEqual(r.returncode, 0, r.stderr)
        text = read(log)
        self.assertTrue(text.startswith(b"IMPORTANT\n"), text[:200])
        self.assertIn(b"pe-vp gemm:", text, "the command's own lines stay")
        self.assertIn(b'"cycles"', text)
        self.assertEqual(os.stat(log).st_ino, inode, "the file was replaced, not appended to")

        # /dev/fd/N and /proc/self/fd/N of a descriptor the command inherited, opened for appending.
        for name in ("/dev/fd/{}", "/proc/self/fd/{}"):
            out = self.path("fd.txt")
            with open(out, "wb") as f:
                f.write(b"HEAD")
            fd = os.open(out, os.O_WRONLY | os.O_APPEND)
            try:
                r = run(GEMM + ["--out", name.format(fd)], self.dir, pass_fds=(fd,))
            finally:
                os.close(fd)
            self.assertEqual(r.returncode, 0, r.stderr)
            data = read(out)
            self.assertTrue(data.startswith(b"HEAD\x93NUMPY"), (name, data[:20]))

    # 2. The temporary file beside a replaced output is unique and created exclusively.
    def test_a_planted_symlink_at_the_temporary_name_is_not_followed(self):
        victim = self.path("victim")
        with open(victim, "w") as f:
            f.write("VICTIM")
        os.symlink(victim, self.path("t1.npy.partial"))
        r = run(GEMM + ["--out", "t1.npy"], self.dir)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(read(victim, "r"), "VICTIM")
        self.assertFalse(os.path.islink(self.path("t1.npy")))
        self.assertEqual(read(self.path("t1.npy"))[:6], b"\x93NUMPY")
        self.assertEqual(sorted(os.listdir(self.dir)), ["t1.npy", "t1.npy.partial", "victim"], "no temporary left")
        mode = stat.S_IMODE(os.stat(self.path("t1.npy")).st_mode)
        umask = os.umask(0)
        os.umask(umask)
        self.assertEqual(mode, 0o666 & ~umask, "a new file gets the mode a plain create gives, not mkstemp's 0600")

    # 3. Every input read whole stops at its kind's limit.
    def test_inputs_stop_at_their_size_limit(self):
        limit = (2 << 30) if not sanitized() else None  # the reads must not hold more than the limit

        def bounded():
            if limit:
                resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

        cases = [
            (["asm", "--gen", "MARIANA", "/dev/zero", "-o", "x.bin"], "/dev/zero: larger than the"),
            (["asm", "/dev/zero", "-o", "x.bin"], "/dev/zero: larger than the"),
            (["run", "--gen", "MARIANA", "/dev/zero"], "/dev/zero: larger than the"),
            (["--config", "/dev/zero", "--dump-config"], "/dev/zero: larger than the"),
            (["run", "--gen", "MARIANA", os.path.join(EXAMPLE, "program.pes"), "--regs", "/dev/zero"],
             "/dev/zero: larger than the"),
            (["run", "--gen", "MARIANA", os.path.join(EXAMPLE, "program.pes"), "--restore", "/dev/zero"],
             "/dev/zero: larger than the"),
            (["disasm", "--gen", "MARIANA", "/dev/zero"], "/dev/zero: larger than the"),
            (["run", "--gen", "MARIANA", os.path.join(EXAMPLE, "program.pes"), "--load", "/dev/zero@0x0:bf16"],
             "/dev/zero: not a .npy file"),
        ]
        for args, expected in cases:
            r = run(args, self.dir, timeout=60, preexec_fn=bounded)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertIn(expected.encode(), r.stderr, args)

        # A sparse text file is refused from its size, before a byte is read.
        big = self.path("big.pes")
        with open(big, "wb") as f:
            f.truncate(1 << 30)
        r = run(["asm", "--gen", "MARIANA", big, "-o", "x.bin"], self.dir, timeout=60, preexec_fn=bounded)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(b"big.pes: larger than the 268435456-byte limit for a program, script or configuration file",
                      r.stderr)

        # A sparse 40 GB .npy: refused from its header's shape, at once.
        huge = self.path("huge.npy")
        with open(huge, "wb") as f:
            head = npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (100000, 100000), }")
            f.write(head)
            f.truncate(len(head) + 4 * 100000 * 100000)
        start = time.monotonic()
        r = run(["gemm", "--a", huge, "--b", huge, "--no-check"], self.dir, timeout=60, preexec_fn=bounded)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(b"pe-vp gemm: M=100000, K=100000, N=100000 needs about", r.stderr)
        self.assertIn(b"GiB of host memory for the operands (limit 16.0 GiB)", r.stderr)
        r = run(RUN[:4] + ["--load", huge + "@0x0:bf16"], self.dir, timeout=60, preexec_fn=bounded)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(b"huge.npy: shape (100000, 100000) of '<f4' needs 40000000000 bytes of data, more than the "
                      b"17179869184-byte host-memory limit for a .npy file", r.stderr)
        self.assertLess(time.monotonic() - start, 30, "the data was read")

    def test_a_fifo_npy_operand_is_read_once(self):
        """A FIFO (--a <(...)) can be read once: the header-first read must not open it twice."""
        data = npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (32, 32), }", b"\0\0\x80\x3f" * 1024)
        writers = []
        for name in ("fa.npy", "fb.npy"):
            os.mkfifo(self.path(name))
            def feed(path=self.path(name)):
                with open(path, "wb") as f:
                    f.write(data)
            writers.append(threading.Thread(target=feed, daemon=True))
            writers[-1].start()
        r = run(["gemm", "--a", "fa.npy", "--b", "fb.npy", "--quiet", "--threads", "1"], self.dir, timeout=60)
        for w in writers:
            w.join(5)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(b"bit-exact", r.stdout)

    def feed_endlessly(self, name, header):
        """A FIFO whose writer sends the header and then zeros until the reader goes (14.4 GB at most)."""
        os.mkfifo(self.path(name))
        def feed(path=self.path(name)):
            try:
                with open(path, "wb") as f:
                    f.write(header)
                    zeros = bytes(1 << 20)
                    for _ in range(14400):
                        f.write(zeros)
            except BrokenPipeError:
                pass  # the reader stopped after the header, as it should
        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        return writer

    def test_operands_too_large_are_refused_from_their_headers_fifos_included(self):
        """60000 x 60000 fp32 is 14.4 GB, under the 16 GiB limit of one file. A regular A and a FIFO B need about
        67 GiB with C and the encoded copies: refused from both headers while B's writer still feeds. A FIFO A is read
        before B's header (its writer may feed B only after A): refused from A's header alone, whose N = 1 estimate
        already passes the limit."""
        header = npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (60000, 60000), }")
        with open(self.path("ra.npy"), "wb") as f:
            f.write(header)
            f.truncate(len(header) + 4 * 60000 * 60000)
        for a, b, expected in [
            ("ra.npy", "fb.npy", b"pe-vp gemm: M=60000, K=60000, N=60000 needs about 67.1 GiB of host memory for the "
                                 b"operands (limit 16.0 GiB)"),
            ("fa.npy", "ra.npy", b"pe-vp gemm: M=60000, K=60000 (--a fa.npy, read before --b) needs at least 26.8 GiB "
                                 b"of host memory for the operands (limit 16.0 GiB)"),
        ]:
            writer = self.feed_endlessly(a if a.startswith("f") else b, header)
            r = run(["gemm", "--a", a, "--b", b, "--no-check", "--quiet"], self.dir, timeout=60)
            writer.join(10)
            self.assertEqual(r.returncode, 2, (a, b, r.stderr))
            self.assertIn(expected, r.stderr, (a, b))
            self.assertFalse(writer.is_alive(), f"--a {a} --b {b}: the FIFO's writer is still feeding: its data was "
                                                "being read")

    def test_fifo_operands_fed_one_after_the_other(self):
        """One writer that fills A's FIFO, then B's (not the two at once as <(...) does), with more than a pipe holds
        (64 KiB): A is read up to its data before B is opened, or the two would wait on each other for ever -- also
        when the writer keeps A open until B is written (its end is checked last)."""
        data = npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (256, 256), }", b"\0\0\x80\x3f" * 65536)
        for hold_a_open in (False, True):
            a, b = ("ha.npy", "hb.npy") if hold_a_open else ("sa.npy", "sb.npy")
            for name in (a, b):
                os.mkfifo(self.path(name))
            def feed():
                fa = open(self.path(a), "wb")
                fa.write(data)
                if not hold_a_open:
                    fa.close()
                with open(self.path(b), "wb") as fb:
                    fb.write(data)
                fa.close()
            writer = threading.Thread(target=feed, daemon=True)
            writer.start()
            r = run(["gemm", "--a", a, "--b", b, "--quiet", "--threads", "1"], self.dir, timeout=120)
            writer.join(5)
            self.assertEqual(r.returncode, 0, (hold_a_open, r.stderr))
            self.assertIn(b"bit-exact", r.stdout, hold_a_open)

    def test_mode_timing_checks_the_operands_data_without_holding_it(self):
        """Mode timing needs the shapes alone. A sparse 17.2 GB A (past the 16 GiB limit of a file held whole) is
        checked from its size and simulated; FIFOs fed one after the other are drained, 64 KiB at a time (the
        process never holds A's 256 MiB); short and long data are still refused."""
        a_header = npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1048576, 4100), }")
        b_data = npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (4100, 1), }", b"\0\0\x80\x3f" * 4100)
        with open(self.path("ra.npy"), "wb") as f:
            f.write(a_header)
            f.truncate(len(a_header) + 4 * 1048576 * 4100)
        with open(self.path("rb.npy"), "wb") as f:
            f.write(b_data)
        r = run(["gemm", "--a", "ra.npy", "--b", "rb.npy", "--mode", "timing"], self.dir, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(b"C[1048576x1] = A[1048576x4100] @ B[4100x1]", r.stdout)
        self.assertIn(b"check:    skipped (mode timing moves no data)", r.stdout)
        with open(self.path("ra.npy"), "r+b") as f:
            f.truncate(len(a_header) + 4 * 1048576 * 4100 - 1)
        r = run(["gemm", "--a", "ra.npy", "--b", "rb.npy", "--mode", "timing"], self.dir, timeout=60)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(b"ra.npy: data is 17196646399 bytes but shape (1048576, 4100) of '<f4' needs 17196646400 bytes",
                      r.stderr)
        # A side past 2^20 (as --m, --k and --n) is refused from the header: the FIFO's endless writer is not drained.
        writer = self.feed_endlessly("wide.npy", npy_bytes("{'descr': '<f4', 'fortran_order': False, "
                                                           "'shape': (1048577, 4100), }"))
        r = run(["gemm", "--a", "wide.npy", "--b", "rb.npy", "--mode", "timing"], self.dir, timeout=60)
        writer.join(10)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(b"pe-vp gemm: --a wide.npy is 1048577x4100: a GEMM side is at most 1048576 (as --m, --k and --n)",
                      r.stderr)
        self.assertFalse(writer.is_alive(), "the FIFO's data was being drained")
        with open(self.path("wide_b.npy"), "wb") as f:
            head = npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (4100, 1048577), }")
            f.write(head)
            f.truncate(len(head) + 4 * 4100 * 1048577)
        r = run(["gemm", "--a", "rb.npy", "--b", "wide_b.npy", "--k", "1", "--mode", "timing"], self.dir, timeout=60)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(b"pe-vp gemm: --b wide_b.npy is 4100x1048577: a GEMM side is at most 1048576", r.stderr)

        # A's 256 MiB is written 1 MiB at a time: a child's peak counts the memory of the process it was forked from
        # (Python's vfork shares it), so this process must not hold A either.
        a_header = npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (16384, 4096), }")
        b_data = npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (4096, 8), }", bytes(4 * 4096 * 8))
        mib = bytes(1 << 20)
        for name, a_extra, expected in [("whole", 0, None),
                                        ("short", -1, b"fa_short.npy: data is 268435455 bytes but shape "
                                                      b"(16384, 4096) of '<f4' needs 268435456 bytes"),
                                        ("long", 1, b"fa_long.npy: data is more than the 268435456 bytes "
                                                    b"shape (16384, 4096) of '<f4' needs")]:
            a, b = "fa_%s.npy" % name, "fb_%s.npy" % name
            for fifo in (a, b):
                os.mkfifo(self.path(fifo))
            def feed(a_extra=a_extra):
                try:
                    with open(self.path(a), "wb") as fa:
                        fa.write(a_header)
                        for i in range(256):
                            fa.write(mib if i < 255 or a_extra >= 0 else mib[:-1])
                        fa.write(bytes(max(a_extra, 0)))
                    with open(self.path(b), "wb") as fb:
                        fb.write(b_data)
                except BrokenPipeError:
                    pass  # a refused A: its reader is gone
            writer = threading.Thread(target=feed, daemon=True)
            writer.start()
            with open(self.path("out"), "w+b") as out_file, open(self.path("err"), "w+b") as err_file:
                peak_read, peak_write = os.pipe()
                p = subprocess.Popen(["/usr/bin/python3", "-c", PEAK_RSS_WRAPPER, str(peak_write), PEVP, "gemm",
                                      "--a", a, "--b", b, "--mode", "timing"], cwd=self.dir, env=ENV,
                                     stdout=out_file, stderr=err_file, pass_fds=(peak_write,),
                                     start_new_session=True)
                os.close(peak_write)
                watchdog = threading.Timer(120, lambda: os.killpg(p.pid, 9))
                watchdog.start()
                _, status, _ = os.wait4(p.pid, 0)
                watchdog.cancel()
                peak_kib = int(os.read(peak_read, 64) or b"0")
                os.close(peak_read)
                out, err = read(self.path("out")), read(self.path("err"))
            writer.join(10)
            self.assertTrue(os.WIFEXITED(status), (name, "killed: it hung", err))
            if expected is None:
                self.assertEqual(os.WEXITSTATUS(status), 0, err)
                self.assertIn(b"C[16384x8] = A[16384x4096] @ B[4096x8]", out)
                self.assertFalse(writer.is_alive(), "B's writer still waits")
                if not sanitized():  # AddressSanitizer's shadow memory and quarantine have their own peak
                    self.assertLess(peak_kib, 128 * 1024, "the timing run held A's 256 MiB")
            else:
                self.assertEqual(os.WEXITSTATUS(status), 2, (name, err))
                self.assertIn(expected, err, name)
            if writer.is_alive():  # a refused A: nobody opens B, whose writer waits
                os.close(os.open(self.path(b), os.O_RDONLY | os.O_NONBLOCK))
                writer.join(10)

    def test_one_pipe_named_twice_is_refused_before_it_is_opened(self):
        """A pipe's bytes can be read once, and a FIFO opened again after its writer has gone waits for a writer for
        ever: one pipe named by two inputs -- a FIFO, a symlink to it, an inherited /dev/fd/N -- is refused before
        either is opened (no writer is needed to see it; these runs hung)."""
        os.mkfifo(self.path("p"))
        os.symlink("p", self.path("link"))
        program = os.path.join(EXAMPLE, "program.pes")
        st = os.path.join(EXAMPLE, "st.npy")
        for args, expected in [
            (["gemm", "--a", "p", "--b", "p"], "--a p and --b p"),
            (["gemm", "--a", "link", "--b", "p", "--mode", "timing"], "--a link and --b p"),
            (["run", "--gen", "MARIANA", program, "--load", "p@0x0:bf16", "--load", "p@0x1000:bf16"],
             "--load p and --load p"),
            (["run", "--gen", "MARIANA", program, "--regs", "link", "--load", st + "@0x0:bf16", "--load", "p@0x8:bf16"],
             "--regs link and --load p"),
            (["run", "--gen", "MARIANA", "p", "--config", "link"], "--config link and program p"),
            (["asm", "p", "-o", "x.bin", "--config", "p"], "--config p and input p"),
            (["disasm", "--gen", "MARIANA", "link", "--config", "p"], "--config p and file link"),
        ]:
            r = run(args, self.dir, timeout=30)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertIn((expected + " name the same pipe, which can be read only once: give each input its own "
                           "file or pipe").encode(), r.stderr, args)
        read_end, write_end = os.pipe()
        try:
            fd = "/dev/fd/%d" % read_end
            r = run(["gemm", "--a", fd, "--b", fd], self.dir, timeout=30, pass_fds=(read_end,))
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn(("--a %s and --b %s name the same pipe" % (fd, fd)).encode(), r.stderr)
        finally:
            os.close(read_end)
            os.close(write_end)
        # One regular file given twice is read twice, as before.
        r = run(RUN + ["--load", st + "@0x4000:bf16"], self.dir)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_inputs_are_read_in_one_order_configuration_first(self):
        """One writer that feeds the --config FIFO, then the source's: asm and run read the configuration first, with
        --gen or without it (the source's .gen then chooses the preset the configuration applies on)."""
        with open(os.path.join(EXAMPLE, "program.pes"), "rb") as f:
            source = f.read()
        for i, args in enumerate((["asm", "--gen", "MARIANA", "SRC", "-o", "x.bin"], ["asm", "SRC", "-o", "x.bin"],
                                  ["run", "--gen", "MARIANA", "SRC", "--mode", "timing"])):
            cfg, src = self.path("cfg%d.json" % i), self.path("src%d.pes" % i)
            for fifo in (cfg, src):
                os.mkfifo(fifo)
            def feed(cfg=cfg, src=src):
                with open(cfg, "w") as f:
                    f.write('{"generation": "MARIANA"}')
                with open(src, "wb") as f:
                    f.write(source)
            writer = threading.Thread(target=feed, daemon=True)
            writer.start()
            try:
                r = run([a if a != "SRC" else src for a in args] + ["--config", cfg], self.dir, timeout=30)
            except subprocess.TimeoutExpired:
                self.fail("%s waited for ever: it opened the source before the configuration" % args)
            finally:
                for fifo in (cfg, src):  # release a writer still waiting
                    try:
                        os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
                    except OSError:
                        pass
                writer.join(10)
            self.assertEqual(r.returncode, 0, (args, r.stderr))

    def test_a_sweep_reads_a_topology_two_workloads_name_once(self):
        """Workloads of one spec may name one SCALE-Sim topology, however spelled (t.csv, ./t.csv, a symlink): it is
        read once, so a FIFO serves them all."""
        os.mkfifo(self.path("t.csv"))
        with open(self.path("s.toml"), "w") as f:
            f.write('[[workload]]\nscalesim_gemm = "t.csv"\n[[workload]]\nname = "again"\nscalesim_gemm = "./t.csv"\n'
                    '[[workload]]\nname = "link"\nscalesim_gemm = "link.csv"\n')
        os.symlink("t.csv", self.path("link.csv"))
        def feed():
            with open(self.path("t.csv"), "w") as f:
                f.write("Layer, M, N, K,\nG1, 16, 16, 16,\n")
        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        r = run(["sweep", "s.toml", "--out", "out", "--no-plots", "--quiet", "-j", "1"], self.dir, timeout=120)
        writer.join(5)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(self.path("out/sweep.json")) as f:
            recorded = f.read()
        self.assertIn('"again"', recorded)
        self.assertIn('"link"', recorded)
        # --config and --set do not reach a sweep's points (they take theirs from the spec): refused, not dropped.
        for args, option in ((["--set", "timing.fp32_factor=7"], "--set"), (["--config", "s.toml"], "--config")):
            r = run(["sweep", "s.toml", "--out", "out2", *args], self.dir, timeout=30)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertIn(("pe-vp sweep: %s does not apply to a sweep: each point's configuration comes from the spec"
                           % option).encode(), r.stderr)

    def test_a_bad_gen_is_named_before_any_input_is_opened(self):
        """A FIFO with no writer blocks whoever opens it: a bad --gen is reported without opening the source."""
        os.mkfifo(self.path("nowriter.pes"))
        for args in (["asm", "--gen", "PLUTO", "nowriter.pes", "-o", "x.bin"],
                     ["run", "--gen", "PLUTO", "nowriter.pes"], ["disasm", "--gen", "PLUTO", "nowriter.pes"]):
            r = run(args, self.dir, timeout=30)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertIn(b"unknown generation 'PLUTO'", r.stderr, args)

    def test_asm_reads_its_source_once(self):
        """Without --gen, asm reads the source for its .gen directive and its records in one read: a FIFO source
        assembles as the file does (it was read twice, and the second open waited for ever)."""
        with open(os.path.join(EXAMPLE, "program.pes"), "rb") as f:
            source = f.read()
        os.mkfifo(self.path("src.pes"))
        def feed():
            with open(self.path("src.pes"), "wb") as f:
                f.write(source)
        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        r = run(["asm", "src.pes", "-o", "piped.bin"], self.dir, timeout=30)
        writer.join(5)
        self.assertEqual(r.returncode, 0, r.stderr)
        plain = run(["asm", os.path.join(EXAMPLE, "program.pes"), "-o", "plain.bin"], self.dir)
        self.assertEqual(plain.returncode, 0, plain.stderr)
        self.assertEqual(read(self.path("piped.bin")), read(self.path("plain.bin")))

    def test_shapes_that_disagree_are_refused_before_the_data_is_read(self):
        """A 1 x 1 A and a sparse 6.4 GB B of 40000 x 40000: the mismatch is named from the headers, not after
        reading B; so is a 1-D operand and a --k that contradicts A."""
        with open(self.path("a1.npy"), "wb") as f:
            f.write(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1), }", b"\0\0\x80\x3f"))
        for name, shape in (("big.npy", "(40000, 40000)"), ("flat.npy", "(1600000000,)")):
            header = npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': %s, }" % shape)
            with open(self.path(name), "wb") as f:
                f.write(header)
                f.truncate(len(header) + 4 * 1600000000)
        start = time.monotonic()
        for args, expected in [
            (["--a", "a1.npy", "--b", "big.npy"],
             b"pe-vp gemm: A is 1x1 and B is 40000x40000: A's columns must equal B's rows"),
            (["--a", "a1.npy", "--b", "flat.npy"],
             b"flat.npy: shape (1600000000,) is 1-D but a matrix needs a 2-D shape (rows, cols)"),
            (["--a", "big.npy", "--b", "big.npy", "--k", "3"],
             b"pe-vp gemm: --k 3 contradicts the operands: --a big.npy has 40000 columns"),
        ]:
            r = run(["gemm", *args, "--no-check", "--quiet"], self.dir, timeout=60)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertIn(expected, r.stderr, args)
        self.assertLess(time.monotonic() - start, 30, "the data was read")

    # 4. An allocation failure is the documented out-of-host-memory error, status 2.
    def test_an_allocation_failure_is_out_of_host_memory(self):
        if sanitized():
            self.skipTest("an address-space limit does not apply under AddressSanitizer")
        # Wherever the memory runs out -- the limits move the failing allocation about a 1,000,000-point sweep's
        # planning -- the message is the same; destructors that allocate while std::bad_alloc unwinds once ended it
        # in std::terminate (status 134).
        values = ", ".join(str(i) for i in range(1, 1001))
        with open(self.path("big.toml"), "w") as f:
            f.write("[[workload]]\ngemms = [{ m = 64, k = 64, n = 64 }]\n[grid]\nsbuf_budget = [%s]\n"
                    "\"timing.psum_rmw_cycles\" = [%s]\n" % (values, values))
        for kib in (350000, 450000, 524288, 600000, 700000):
            def limited(kib=kib):
                resource.setrlimit(resource.RLIMIT_AS, (kib * 1024, kib * 1024))
            shutil.rmtree(self.path("big_out"), ignore_errors=True)
            r = run(["sweep", "big.toml", "--out", "big_out", "--no-plots", "--quiet"], self.dir, timeout=120,
                    preexec_fn=limited)
            self.assertEqual((r.returncode, r.stderr), (2, b"pe-vp: out of host memory\n"), kib)
        for kib, args in [(2000000, ["gemm", "--m", "32768", "--k", "32768", "--n", "1", "--no-check", "--quiet"]),
                          (90000, GEMM)]:
            def limited(kib=kib):
                resource.setrlimit(resource.RLIMIT_AS, (kib * 1024, kib * 1024))
            r = run(args, self.dir, timeout=120, preexec_fn=limited)
            self.assertEqual(r.returncode, 2, (kib, r.stderr))
            self.assertIn(b"pe-vp: out of host memory", r.stderr, kib)
            self.assertNotIn(b"std::bad_alloc", r.stderr)

    # 5. Two outputs in one file, however spelled: relative, ./, absolute, a hard link.
    def test_two_outputs_naming_one_file_are_refused(self):
        with open(self.path("hl1"), "w") as f:
            f.write("x")
        os.link(self.path("hl1"), self.path("hl2"))
        cases = [
            (GEMM + ["--out", "fresh1", "--stats-json", "./fresh1"], b"--out and --stats-json both name './fresh1'"),
            (GEMM + ["--out", "f2", "--stats-json", self.path("f2")], b"--out and --stats-json both name"),
            (GEMM + ["--trace", "hl1", "--vcd", "hl2"], b"--trace and --vcd both name 'hl2' (as 'hl1')"),
            (RUN + ["--dump", DUMP + "o3", "--dump", DUMP + "./o3"], b"both name './o3'"),
            (RUN + ["--trace", "o4", "--checkpoint", "./o4"], b"--trace and --checkpoint both name './o4'"),
        ]
        for args, expected in cases:
            r = run(args, self.dir)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertIn(expected, r.stderr, args)
        for name in ("fresh1", "f2", "o3", "o4"):
            self.assertFalse(os.path.exists(self.path(name)), name)

    # 6. An empty path (an unset shell variable) is refused naming the option.
    def test_empty_paths_are_refused_naming_the_option(self):
        for args, option in [(GEMM + ["--out", ""], "--out"), (GEMM + ["--trace", ""], "--trace"),
                             (GEMM + ["--stats-json", ""], "--stats-json"), (["--config", "", "--dump-config"], "--config"),
                             (["demo", "--out-dir", ""], "--out-dir"), (RUN + ["--regs", ""], "--regs"),
                             (RUN + ["--checkpoint", ""], "--checkpoint"), (["gemm", "--a", "", "--b", ""], "--a")]:
            r = run(args, self.dir)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertIn((option + ": an empty path").encode(), r.stderr, args)

    # 7. A long .npy header part is cut in the message.
    def test_long_npy_header_parts_are_cut(self):
        for name, header in [("longdescr.npy", "{'descr': '" + "x" * 20000 + "', 'fortran_order': False, 'shape': (2, 2), }"),
                             ("longkey.npy", "{'" + "k" * 5000 + "': 1}"),
                             ("longkey2.npy", "{'" + "k" * 5000 + "' 1}")]:
            with open(self.path(name), "wb") as f:
                f.write(npy_bytes(header, b"\0" * 16))
            r = run(["gemm", "--a", name, "--b", name, "--no-check"], self.dir)
            self.assertEqual(r.returncode, 2, r.stderr[:300])
            self.assertLess(len(r.stderr), 800, (name, r.stderr[:400]))
            self.assertIn(b"characters)", r.stderr, name)

    # 8. gemm checks --out before the operands and the simulation, as run does.
    def test_gemm_refuses_a_bad_out_before_simulating(self):
        os.mkdir(self.path("d"))
        for out, expected in [("d", b"pe-vp gemm: --out d: is a directory"),
                              ("missing_zz/x.npy", b"pe-vp gemm: --out missing_zz/x.npy: no such directory 'missing_zz'")]:
            r = run(GEMM + ["--out", out], self.dir)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn(expected, r.stderr)
            self.assertNotIn(b"platform:", r.stdout, "the simulation ran")

    # 9. A read-only output file is refused, not replaced.
    def test_a_read_only_output_is_refused(self):
        ro = self.path("ro.npy")
        with open(ro, "w") as f:
            f.write("KEEP")
        os.chmod(ro, 0o444)
        for option in ("--out", "--stats-json", "--trace"):
            r = run(GEMM + [option, "ro.npy"], self.dir)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn(b"ro.npy: the file is read-only", r.stderr)
            self.assertNotIn(b"platform:", r.stdout, "refused before the simulation")
        self.assertEqual(read(ro, "r"), "KEEP")
        r = run(["asm", "--gen", "MARIANA", os.path.join(EXAMPLE, "program.pes"), "-o", "ro.npy"], self.dir)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(b"ro.npy: the file is read-only", r.stderr)
        self.assertEqual(read(ro, "r"), "KEEP")
        os.symlink("/dev/null", self.path("null"))  # a device behind a link is still written in place
        r = run(GEMM + ["--out", "null"], self.dir)
        self.assertEqual(r.returncode, 0, r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
