#!/usr/bin/env python3
"""Writes the seed corpora of the libFuzzer harnesses, tests/fuzz/corpus/<target>/, from the project's own files:
the sample streams of `pe-vp demo`, the example and golden programs and register scripts, docs/assembly.md's
examples, the configuration dumps of every generation, and small hand-built .npy files. Seeds are kept small (the
fuzzers' -max_len). Reproducers of fixed findings live beside them as regress-*; this script leaves them alone.
It also writes the dictionaries tests/fuzz/<target>.dict from what pe-vp prints: the assembler's mnemonics, field
paths and value names (disasm of every opcode byte with assorted bodies), the configuration keys (--dump-config)
and the register and field names (pe-vp regs --json).

    tests/fuzz/make_corpus.py [--pe-vp build/platform/pe-vp]
"""
import argparse
import json
import os
import pathlib
import re
import struct
import subprocess
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "tests/fuzz/corpus"
GENS = ["CAYMAN", "MARIANA", "MARIANA_PLUS", "MAVERICK"]  # selector bits 0-1 (fuzz_util.h)
ENV = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")


def gen_index(text, default="MARIANA"):
    m = re.search(r"^\s*\.gen\s+(\S+)", text, re.M)
    name = (m.group(1) if m else default).upper()
    aliases = {"V3": "CAYMAN", "V4": "MARIANA", "V4+": "MARIANA_PLUS", "V5": "MAVERICK"}
    return GENS.index(aliases.get(name, name))


def clear(target):
    d = OUT / target
    d.mkdir(parents=True, exist_ok=True)
    for f in d.iterdir():
        if not f.name.startswith("regress-"):
            f.unlink()
    return d


def write(d, name, data):
    (d / name).write_bytes(data if isinstance(data, bytes) else data.encode())


# fuzz_util.h geometry 7: the shape three input bytes give (the same arithmetic).
def custom_geometry(b0, b1, b2):
    partitions = 32 << (b0 >> 4 & 3)
    return {"pe_rows": 32 << (b0 & 3), "pe_cols": 32 << (b0 >> 2 & 3), "partitions": partitions,
            "psum_banks": 1 << (b0 >> 6 & 3), "sbuf_partition_bytes": 4096 * (1 + b1 % (8192 // partitions)),
            "psum_bank_bytes": 64 * (1 + (b2 | (b1 & 3) << 8) % 1024)}


# (selector bytes, geometry): 64 x 64 on 128 partitions of 132 KiB, 4 PSUM banks of 1 KiB; 32 x 256 on 256
# partitions of 68 KiB, 2 banks of 192 bytes.
CUSTOM = [bytes([0xA5, 32, 15]), bytes([0x7C, 16, 2])]


def decode_and_assemble(pe_vp):
    dec, asm = clear("decode"), clear("assemble")
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([pe_vp, "demo", "--out-dir", tmp], check=True, env=ENV, stdout=subprocess.DEVNULL)
        for gi, g in enumerate(GENS):
            blob = pathlib.Path(tmp, f"sample_{g}.bin").read_bytes()
            recs = [blob[i:i + 64] for i in range(0, len(blob), 64)]
            for i, r in enumerate(recs):
                write(dec, f"{g.lower()}_{i:02d}", bytes([gi]) + r)
            # pairs (the stream rule) on each of the other geometries
            for i in range(0, len(recs) - 1, 2):
                geo = 1 + (i // 2) % 6
                write(dec, f"{g.lower()}_pair{i:02d}_geo{geo}", bytes([gi | geo << 2]) + recs[i] + recs[i + 1])
            for c, custom in enumerate(CUSTOM):
                write(dec, f"{g.lower()}_custom{c}", bytes([gi | 7 << 2]) + custom + recs[0] + recs[1])
            sample = str(pathlib.Path(tmp, f"sample_{g}.bin"))
            text = run(pe_vp, "disasm", "--gen", g, sample)
            write(asm, f"disasm_{g.lower()}", bytes([gi]) + text.encode())
            write(asm, f"disasm_{g.lower()}_lenient", bytes([gi | 4]) + text.encode())
            for c, custom in enumerate(CUSTOM):
                sets = [a for k, v in custom_geometry(*custom).items() for a in ("--set", f"geometry.{k}={v}")]
                text = run(pe_vp, *sets, "disasm", "--gen", g, sample)
                if text:  # the configuration refuses a shape whose PSUM reaches the APB window
                    write(asm, f"disasm_{g.lower()}_custom{c}", bytes([gi | 4 | 7 << 3]) + custom + text.encode())
    programs = sorted(ROOT.glob("platform/examples/*/program.pes")) + sorted(ROOT.glob("tests/golden/programs/*.pes"))
    for p in programs:
        text = p.read_text()
        write(asm, f"{p.parent.name}_{p.stem}", bytes([gen_index(text)]) + text.encode())
    doc = (ROOT / "docs/assembly.md").read_text()
    for i, block in enumerate(re.findall(r"```\n(\.gen .*?)```", doc, re.S)):
        write(asm, f"doc_{i:02d}", bytes([gen_index(block)]) + block.encode())


def npy_file(header, data, major=1):
    length = struct.pack("<H" if major == 1 else "<I", len(header))
    return b"\x93NUMPY" + bytes([major, 0]) + length + header.encode() + data


def npy():
    d = clear("npy")
    h = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }"
    f4 = struct.pack("<4f", 1.0, -2.5, float("inf"), 3.0e-39)
    write(d, "f4_2x2_v1", npy_file(h % ("<f4", "(2, 2)") + " " * 53 + "\n", f4))
    write(d, "f4_2x2_v2", npy_file(h % ("<f4", "(2, 2)") + "\n", f4, major=2))
    write(d, "f4_1d", npy_file(h % ("<f4", "(4,)"), f4))
    write(d, "f2_2x3", npy_file(h % ("<f2", "(2, 3)"), struct.pack("<6H", 0x3C00, 0x7C00, 0xFC00, 0x7E01, 1, 0x8000)))
    write(d, "f8_1x3", npy_file(h % ("<f8", "(1, 3)"), struct.pack("<3d", 1e300, -1e-320, 0.1)))
    write(d, "f4_0x5", npy_file(h % ("<f4", "(0, 5)"), b""))
    write(d, "f4_nospace", npy_file("{'descr':'<f4','fortran_order':False,'shape':(1,1)}", struct.pack("<f", 7.0)))
    write(d, "f4_quotes", npy_file('{"descr": "<f4", "shape": (1, 2), "fortran_order": False}', struct.pack("<2f", 1, 2)))


def config(pe_vp):
    d = clear("config")
    for gi, g in enumerate(GENS):
        dump = subprocess.run([pe_vp, "gemm", "--gen", g, "--dump-config"], env=ENV, stdout=subprocess.PIPE,
                              check=True).stdout
        write(d, f"dump_{g.lower()}", bytes([gi << 1]) + dump)
    write(d, "partial_comments", bytes([2]) + b'// a partial file\n{ "arr_seq": { "ififo_depth": 8 },\n'
          b'  /* times in ns */ "csrs": { "access_time_ns": 12.5 }, "mode": "timing" }\n')
    write(d, "geometry_file", bytes([0]) + b'{"generation": "v4", "geometry": {"pe_rows": 64, "pe_cols": 64,'
          b' "psum_banks": 4, "psum_bank_bytes": 1024}, "address_map": {"iq": "0x3020000"}}')
    sets = [
        "geometry.pe_rows=64\ngeometry.pe_cols=64",
        "geometry.pe_rows=256\ngeometry.pe_cols=256\ngeometry.partitions=256\ngeometry.sbuf_partition_bytes=131072",
        "generation=CAYMAN\narr_seq.ififo_depth=0x10\ncsrs.access_time_ns=1.5 us",
        "tensor_engine_clock_ghz=2400 MHz\nmode=functional\ncsrs.unmapped=read_zero_write_ignore",
        "address_map.iq=0x3020000\ntiming.throttle_fraction=0.25\ncsrs.access_time_ns=500ps",
    ]
    for i, s in enumerate(sets):
        write(d, f"sets_{i}", bytes([1 | (i % 4) << 1]) + s.encode())
    # Nesting (D-NESTING-DEPTH): at the 64-level limit, one past it, and as deep as -max_len (4096) allows, in
    # arrays, objects, behind comments and with brackets in strings that do not count.
    write(d, "nesting_at_limit", bytes([0]) + b'{"seq": ' + b"[" * 63 + b"]" * 63 + b"}")
    write(d, "nesting_past_limit", bytes([0]) + b'{"seq": ' + b"[" * 64 + b"]" * 64 + b"}")
    write(d, "nesting_deep_arrays", bytes([0]) + b'{"seq": ' + b"[" * 2000 + b"]" * 2000 + b"}")
    write(d, "nesting_deep_objects", bytes([0]) + b'{"a": ' * 550 + b"1" + b"}" * 550)
    write(d, "nesting_strings_comments", bytes([2]) + b'// [[[[\n/* {{{{ */ {"seq": {"queue_depth": "' + b"[" * 100 +
          b'\\"' + b"{" * 100 + b'"}}')


def sweep_nesting():
    """Seeds of fuzz_sweep that nest (D-NESTING-DEPTH), written beside its hand-made seeds."""
    d = OUT / "sweep"
    d.mkdir(parents=True, exist_ok=True)
    workload = b'[[workload]]\nnetwork = "resnet50"\n'
    write(d, "nesting_toml_header_at_limit", bytes([0]) + workload + b"[set." + b".".join([b"a"] * 62) + b"]\nx = 1\n")
    write(d, "nesting_toml_header_deep", bytes([0]) + workload + b"[set." + b".".join([b"a"] * 1900) + b"]\nx = 1\n")
    write(d, "nesting_toml_dotted_key_deep", bytes([0]) + workload + b"[set]\n" + b".".join([b"a"] * 1900) + b" = 1\n")
    write(d, "nesting_toml_arrays_deep", bytes([0]) + workload + b"[grid]\ntile_n = " + b"[" * 1000 + b"]" * 1000 + b"\n")
    write(d, "nesting_toml_inline_tables", bytes([0]) + workload + b"[set]\ng = " + b"{a = " * 500 + b"1" +
          b"}" * 500 + b"\n")
    write(d, "nesting_toml_deep_then_syntax_error", bytes([0]) + b"[" + b".".join([b"a"] * 1900) + b"]\n@\n")
    write(d, "nesting_json_deep", bytes([1]) + b'{"workload": {"network": "resnet50"}, "set": ' + b'{"a": ' * 550 +
          b"1" + b"}" * 551)


def regs():
    d = clear("regs")
    for p in sorted(ROOT.glob("platform/examples/*/regs.txt")) + sorted(ROOT.glob("tests/golden/programs/*.regs")):
        write(d, f"{p.parent.name}_{p.stem}", p.read_bytes())
    write(d, "forms", "write protected throttle_cfg.disable_throttle 0x1FF\npoll vp seq_status.busy 0\n"
          "read cluster perf_cntr_cfg\nexpect top queue_cfg.fifo_size_sel 1 # comment\nsubmit\nwait\n")


def run(pe_vp, *args):
    return subprocess.run([pe_vp, *args], env=ENV, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout


def write_dict(target, header, tokens):
    def quote(t):
        return '"' + "".join(c if 0x20 <= ord(c) < 0x7F and c not in '"\\' else "\\x%02x" % ord(c) for c in t) + '"'
    lines = ["# " + h for h in header] + [quote(t) for t in sorted(set(tokens))]
    (ROOT / "tests/fuzz" / f"{target}.dict").write_text("\n".join(lines) + "\n")


def dicts(pe_vp):
    # Assembly: every opcode byte of every generation, with bodies that make each enum value and union member appear.
    tokens = {".gen ", ".geometry ", ".const ", ".equ ", ".raw ", "sbuf[", "psum[", "mx(", "indirect(", "scale=",
              "index=", "num_index=", "bytes:", "src=", "dst=", "identity=", "src_seed=", "dst_seed=", "0x", "[1,",
              "]:[", "+0x", "#", ";", "|", "(", ")", "-", "*", "\n"}
    tokens |= {g for g in GENS} | {"v3", "v4", "v4+", "v5"}
    tokens |= {f"{k}=" for k in ("pe_rows", "pe_cols", "partitions", "sbuf_partition_bytes", "psum_banks",
                                  "psum_bank_bytes")}
    tokens |= {"bf16", "fp16", "fp32", "tf32", "fp8_e4m3", "fp8_e5m2", "fp8_e3m4", "fp8_e4m3fn", "fp4_e2m1"}
    with tempfile.TemporaryDirectory() as tmp:
        for g in GENS:
            blob = bytearray()
            for op in (0x01, 0x02, 0x03, 0x06, 0x07, 0x08, 0x09, 0x0A, 0xE4):
                for v in list(range(0, 24)) + [0x80, 0xFF]:
                    blob += bytes([op]) + bytes([v]) * 63
            path = pathlib.Path(tmp, g)
            path.write_bytes(bytes(blob))
            for line in run(pe_vp, "disasm", "--gen", g, str(path)).splitlines():
                if line.startswith("#") or line.startswith("."):
                    continue
                words = line.split("#")[0].split()
                if words:
                    tokens.add(words[0] + " ")
                for w in words[1:]:
                    key, _, value = w.partition("=")
                    tokens.add(key + "=")
                    for name in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", value):
                        if name not in ("sbuf", "psum", "mx", "indirect", "scale", "index", "num_index", "bytes"):
                            tokens.add(name)
    write_dict("assemble", ["Assembler tokens (tests/fuzz/make_corpus.py): directives, operand syntax, mnemonics,",
                            "field paths and the value names pe-vp disasm prints."], tokens)

    # Configuration: keys as JSON keys and as --set keys, and the values' spellings.
    dump = json.loads(run(pe_vp, "gemm", "--dump-config"))
    tokens = {"{", "}", ":", ",", "\"", "//", "/*", "*/", "true", "false", "null", "0x", "1e", "-", ".5", "=",
              " ns", " ps", " us", " ms", " s", " GHz", " MHz", "functional", "timing", "both", "error",
              "read_zero_write_ignore", "\n"} | set(GENS) | {"v3", "v4", "v4+", "v5"}
    for key, value in dump.items():
        tokens |= {f'"{key}"', f"{key}="}
        if isinstance(value, dict):
            for sub in value:
                tokens |= {f'"{sub}"', f"{key}.{sub}="}
    write_dict("config", ["Configuration keys and value spellings (tests/fuzz/make_corpus.py, from --dump-config)."],
               tokens)

    # Register scripts: the commands, faces, register (bundle.register) and field names.
    tokens = {"write ", "read ", "expect ", "poll ", "submit", "wait", "expect_fault ", "clear_error", "dump ", "top ", "cluster ", "protected ", "vp ",
              "0x", "#", "\n"}
    for face in ("top", "cluster", "protected", "vp"):
        for reg in json.loads(run(pe_vp, "regs", "--regfile", face, "--json"))["registers"]:
            tokens |= {reg["name"], reg["bundle"] + "." + reg["name"]}
            tokens |= {"." + f["name"] for f in reg.get("fields", [])}
    write_dict("regs", ["Register-script commands, faces, register and field names (tests/fuzz/make_corpus.py,",
                        "from pe-vp regs --json)."], tokens)

    write_dict("npy", [".npy tokens (tests/fuzz/make_corpus.py): magic, versions, the header dict's keys and values."],
               ["\x93NUMPY", "\x01\x00", "\x02\x00", "{'descr': ", "'descr'", "'fortran_order'", "'shape'",
                "'<f2'", "'<f4'", "'<f8'", "'>f4'", "'<i4'", "True", "False", "(", ")", ",)", ", ", "}", ": ",
                "\"", "\\", "\n", "18446744073709551615", "4294967296"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pe-vp", default=str(ROOT / "build/platform/pe-vp"))
    a = ap.parse_args()
    decode_and_assemble(a.pe_vp)
    npy()
    config(a.pe_vp)
    sweep_nesting()
    regs()
    dicts(a.pe_vp)


if __name__ == "__main__":
    main()
