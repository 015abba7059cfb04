#!/usr/bin/python3
"""Register-file generator: one JSON schema in, five files out.

    regfile_gen.py SCHEMA.json --out-dir DIR

reads a register-file schema in the spec's own JSON shape
(models/regfile/schemas/*.json, described in docs/regfile-schemas.md) and
writes, deterministically (byte-identical on every run, no timestamps):

  DIR/<name>_regs.h     driver header: namespace pevp::regs::<name>, constexpr
                        offsets, field shifts/masks/resets, names; no dependency
                        beyond <cstdint>; declares regfile_desc()
  DIR/<name>_regs_c.h   the same map as a C99 header (drivers written in C): macros
                        PEVP_<NAME>_<BUNDLE>_<REGISTER>_OFFSET / _RESET / _RW_MASK ...,
                        per field _SHIFT / _WIDTH / _MASK / _RESET and static inline
                        _get / _set; only <stdint.h>; gcc -std=c99 -pedantic clean
  DIR/<name>_table.cpp  the pevp::regfile::RegFileDesc tables of
                        models/regfile/include/pevp/regfile/desc.h
  DIR/<name>.v          a synthesizable Verilog APB4 slave of the same register file
  DIR/<name>_rtl.h      the SystemC pins of that Verilog Verilated with --sc (models/regfile_rtl)
  DIR/<name>.md         a Markdown reference page

Every schema error (malformed JSON, missing or unknown keys, bad numbers, bad
Position strings, unknown access types, fields outside the data width or
overlapping, resets wider than their field, duplicate names, misaligned,
overlapping or out-of-window registers) is reported on stderr naming the file,
bundle, register and field; the exit status is 1 and nothing is written.

Python standard library only.
"""

import argparse
import json
import os
import re
import sys
import tempfile

GENERATOR = "scripts/regfile_gen.py"
ACCESS_TYPES = ("RW", "RO", "PulseOnW")
FLAVORS = ("POSEDGE", "NEGEDGE")
INTERFACES = ("APB",)

NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")
POSITION_RE = re.compile(r"^\s*(?:\[\s*(\d+)\s*(?::\s*(\d+)\s*)?\]|(\d+))\s*$")
NUMBER_RE = re.compile(r"^\s*(0[xX][0-9a-fA-F]+|[0-9]+)\s*$")

# Names the generated C++ uses itself (or that would shadow what it uses).
RESERVED_NAMES = {"std", "pevp", "regs", "regfile", "offsets", "regfile_desc"}

CXX_KEYWORDS = set("""
alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t
char16_t char32_t class compl concept const consteval constexpr constinit const_cast
continue co_await co_return co_yield decltype default delete do double dynamic_cast
else enum explicit export extern false float for friend goto if inline int long
mutable namespace new noexcept not not_eq nullptr operator or or_eq private
protected public register reinterpret_cast requires return short signed sizeof
static static_assert static_cast struct switch template this thread_local throw
true try typedef typeid typename union unsigned using virtual void volatile
wchar_t while xor xor_eq final override import module
""".split())

# The register-file name becomes the Verilog module name.
VERILOG_KEYWORDS = set("""
always and assign automatic begin buf bufif0 bufif1 case casex casez cell cmos config
deassign default defparam design disable edge else end endcase endconfig endfunction
endgenerate endmodule endprimitive endspecify endtable endtask event for force forever
fork function generate genvar highz0 highz1 if ifnone incdir include initial inout
input instance integer join large liblist library localparam macromodule medium module
nand negedge nmos nor noshowcancelled not notif0 notif1 or output parameter pmos
posedge primitive pull0 pull1 pulldown pullup pulsestyle_onevent pulsestyle_ondetect
rcmos real realtime reg release repeat rnmos rpmos rtran rtranif0 rtranif1 scalared
showcancelled signed small specify specparam strong0 strong1 supply0 supply1 table
task time tran tranif0 tranif1 tri tri0 tri1 triand trior trireg unsigned use uwire
vectored wait wand weak0 weak1 while wire wor xnor xor logic bit byte int shortint
longint interface package class
""".split())


class SchemaError(Exception):
    """A schema error; fatal ones abort validation immediately."""


# --------------------------------------------------------------------------
# Locations and error collection
# --------------------------------------------------------------------------

def where(path, bundle=None, register=None, field=None):
    parts = []
    if bundle is not None:
        parts.append(f"bundle '{bundle}'")
    if register is not None:
        parts.append(f"register '{register}'")
    if field is not None:
        parts.append(f"field '{field}'")
    return f"{path}: " + (", ".join(parts) + ": " if parts else "")


class Errors:
    def __init__(self):
        self.messages = []

    def add(self, loc, msg):
        self.messages.append(loc + msg)

    def fatal(self, loc, msg):
        self.add(loc, msg)
        raise SchemaError()


# --------------------------------------------------------------------------
# Reading and validating
# --------------------------------------------------------------------------

def load_json(path, errors):
    try:
        with open(path, "r", encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        errors.fatal(f"{path}: ", f"cannot read schema: {exc.strerror}")
    except UnicodeDecodeError as exc:
        errors.fatal(f"{path}: ", f"schema is not UTF-8 text ({exc.reason} at byte {exc.start})")

    def pairs(items):
        obj = {}
        for key, value in items:
            if key in obj:
                raise ValueError(f"duplicate key '{key}' in a JSON object")
            obj[key] = value
        return obj

    try:
        return json.loads(text, object_pairs_hook=pairs)
    except json.JSONDecodeError as exc:
        errors.fatal(f"{path}:{exc.lineno}:{exc.colno}: ", f"malformed JSON: {exc.msg}")
    except ValueError as exc:
        errors.fatal(f"{path}: ", f"malformed JSON: {exc}")


def expect_keys(obj, required, optional, loc, errors, what):
    if not isinstance(obj, dict):
        errors.fatal(loc, f"{what} must be a JSON object, not {type(obj).__name__}")
    for key in required:
        if key not in obj:
            errors.fatal(loc, f"{what} is missing key '{key}'")
    for key in obj:
        if key not in required and key not in optional:
            errors.fatal(loc, f"{what} has unknown key '{key}' (expected {', '.join(required + optional)})")


def number(value, key, loc, errors):
    """An integer given as a JSON integer or a "0x.."/decimal string."""
    if isinstance(value, bool):
        errors.fatal(loc, f"{key} must be a number, not {json.dumps(value)}")
    if isinstance(value, int):
        if value < 0:
            errors.fatal(loc, f"{key} {value} is negative")
        return value
    if isinstance(value, str):
        m = NUMBER_RE.match(value)
        if m:
            return int(m.group(1), 0) if m.group(1)[:2].lower() == "0x" else int(m.group(1), 10)
    errors.fatal(loc, f"{key} {json.dumps(value)} is not a number (use an integer or a \"0x..\" string)")


def string(value, key, loc, errors):
    if not isinstance(value, str):
        errors.fatal(loc, f"{key} must be a string, not {json.dumps(value)}")
    return value


def check_name(value, key, loc, errors, verilog=False):
    name = string(value, key, loc, errors)
    if not NAME_RE.match(name):
        errors.fatal(loc, f"bad {key} '{name}': names are lower-case identifiers [a-z][a-z0-9_]*")
    if "__" in name or name.endswith("_"):
        errors.fatal(loc, f"bad {key} '{name}': no double or trailing underscores (reserved in C++ / port names)")
    if name in CXX_KEYWORDS or (verilog and name in VERILOG_KEYWORDS):
        errors.fatal(loc, f"bad {key} '{name}': a C++ or Verilog keyword")
    if name in RESERVED_NAMES:
        errors.fatal(loc, f"bad {key} '{name}': reserved by the generated code ({', '.join(sorted(RESERVED_NAMES))})")
    return name


def parse_position(value, loc, errors, data_width):
    text = value if isinstance(value, str) else None
    if isinstance(value, int) and not isinstance(value, bool):
        text = str(value)
    m = POSITION_RE.match(text) if text is not None else None
    if not m:
        errors.add(loc, f"bad Position {json.dumps(value)}: expected \"[msb:lsb]\" or a bit number such as \"8\"")
        return None
    if m.group(3) is not None:
        msb = lsb = int(m.group(3))
    else:
        msb = int(m.group(1))
        lsb = int(m.group(2)) if m.group(2) is not None else msb
    if msb < lsb:
        errors.add(loc, f"bad Position {json.dumps(value)}: msb {msb} is below lsb {lsb}")
        return None
    if msb >= data_width:
        errors.add(loc, f"field outside {data_width} bits: Position {json.dumps(value)} reaches bit {msb}")
        return None
    return msb, lsb


class Field:
    def __init__(self, name, msb, lsb, access, reset, description):
        self.name, self.msb, self.lsb = name, msb, lsb
        self.width = msb - lsb + 1
        self.access, self.reset, self.description = access, reset, description

    @property
    def mask(self):
        return ((1 << self.width) - 1) << self.lsb

    def bits(self):
        return f"[{self.msb}:{self.lsb}]" if self.width > 1 else f"[{self.lsb}]"


class Register:
    def __init__(self, name, offset, description, fields, bundle, definition):
        self.name, self.offset, self.description = name, offset, description
        self.fields, self.bundle, self.definition = fields, bundle, definition

    @property
    def reset(self):
        return sum((f.reset << f.lsb) for f in self.fields if f.access != "PulseOnW")

    def mask(self, access):
        return sum(f.mask for f in self.fields if f.access == access)

    @property
    def access(self):
        """Register-level access: RO when every field is RO, else RW."""
        return "RO" if all(f.access == "RO" for f in self.fields) else "RW"

    def access_set(self):
        seen = []
        for f in self.fields:
            if f.access not in seen:
                seen.append(f.access)
        return "+".join(seen)


class Bundle:
    def __init__(self, name, base, size, count, registers):
        self.name, self.base, self.size, self.count = name, base, size, count
        self.registers = registers


class Instance:
    """One expanded register: definition x array instance."""

    def __init__(self, reg, index):
        self.reg, self.index = reg, index
        b = reg.bundle
        self.offset = b.base + index * b.size + reg.offset
        self.name = reg.name if b.count == 1 else f"{reg.name}_{index}"
        self.flat = f"{b.name}_{self.name}"


class RegFile:
    def __init__(self):
        self.name = ""
        self.addr_width = self.size = self.data_width = 0
        self.interface = self.flavor = ""
        self.vp_defined = False
        self.bundles = []
        self.definitions = []
        self.instances = []
        self.source = ""


def read_schema(path):
    """Returns (RegFile, []) or (None, [error messages])."""
    errors = Errors()
    try:
        rf = validate(path, load_json(path, errors), errors)
    except SchemaError:
        return None, errors.messages
    if errors.messages:
        return None, errors.messages
    return rf, []


def validate(path, doc, errors):
    top = where(path)
    rf = RegFile()
    rf.source = os.path.basename(path)
    expect_keys(doc, ["RegFile"], ["VpDefined"], top, errors, "the schema")
    if "VpDefined" in doc:
        if not isinstance(doc["VpDefined"], bool):
            errors.fatal(top, f"VpDefined must be true or false, not {json.dumps(doc['VpDefined'])}")
        rf.vp_defined = doc["VpDefined"]
    meta = doc["RegFile"]
    expect_keys(meta, ["Name", "AddrWidth", "SizeInBytes", "InterfaceType", "RegfileFlavor",
                       "DataWidth", "RegistersBundleArrays"], [], top, errors, "RegFile")
    rf.name = check_name(meta["Name"], "Name", top, errors, verilog=True)
    stem = os.path.splitext(os.path.basename(path))[0]
    if stem != rf.name:
        errors.fatal(top, f"Name '{rf.name}' does not match the file name '{stem}.json'")
    rf.addr_width = number(meta["AddrWidth"], "AddrWidth", top, errors)
    rf.size = number(meta["SizeInBytes"], "SizeInBytes", top, errors)
    rf.data_width = number(meta["DataWidth"], "DataWidth", top, errors)
    rf.interface = string(meta["InterfaceType"], "InterfaceType", top, errors)
    rf.flavor = string(meta["RegfileFlavor"], "RegfileFlavor", top, errors)
    if rf.data_width != 32:
        errors.fatal(top, f"DataWidth {rf.data_width} is not supported (only 32)")
    if not 3 <= rf.addr_width <= 32:
        errors.fatal(top, f"AddrWidth {rf.addr_width} is out of range 3..32")
    if rf.size == 0 or rf.size > (1 << rf.addr_width):
        errors.fatal(top, f"SizeInBytes 0x{rf.size:x} does not fit AddrWidth {rf.addr_width} "
                          f"(at most 0x{1 << rf.addr_width:x})")
    if rf.interface not in INTERFACES:
        errors.fatal(top, f"unknown InterfaceType '{rf.interface}' (expected {', '.join(INTERFACES)})")
    if rf.flavor not in FLAVORS:
        errors.fatal(top, f"unknown RegfileFlavor '{rf.flavor}' (expected {', '.join(FLAVORS)})")
    word = rf.data_width // 8

    bundles_json = meta["RegistersBundleArrays"]
    if not isinstance(bundles_json, list) or not bundles_json:
        errors.fatal(top, "RegistersBundleArrays must be a non-empty list")

    bundle_names = {}
    for bi, bj in enumerate(bundles_json):
        bloc = where(path) + f"RegistersBundleArrays[{bi}]: "
        expect_keys(bj, ["name", "AddressOffset", "BundleSizeInBytes", "ArraySize", "Registers"], [],
                    bloc, errors, "a bundle")
        bname = check_name(bj["name"], "bundle name", bloc, errors)
        bloc = where(path, bname)
        if bname in bundle_names:
            errors.add(bloc, f"duplicate bundle name (also RegistersBundleArrays[{bundle_names[bname]}])")
        bundle_names.setdefault(bname, bi)
        base = number(bj["AddressOffset"], "AddressOffset", bloc, errors)
        size = number(bj["BundleSizeInBytes"], "BundleSizeInBytes", bloc, errors)
        count = number(bj["ArraySize"], "ArraySize", bloc, errors)
        if count < 1:
            errors.fatal(bloc, f"ArraySize {count} must be at least 1")
        if size == 0 or size % word:
            errors.fatal(bloc, f"BundleSizeInBytes 0x{size:x} must be a non-zero multiple of {word}")
        if base % word:
            errors.add(bloc, f"misaligned bundle: AddressOffset 0x{base:x} is not a multiple of {word}")
        if base + size * count > rf.size:
            errors.add(bloc, f"bundle 0x{base:x}..0x{base + size * count - 1:x} is outside SizeInBytes 0x{rf.size:x}")
        bundle = Bundle(bname, base, size, count, [])
        rf.bundles.append(bundle)

        regs_json = bj["Registers"]
        if not isinstance(regs_json, list) or not regs_json:
            errors.fatal(bloc, "Registers must be a non-empty list")
        reg_names = {}
        for ri, rj in enumerate(regs_json):
            rloc = where(path, bname) + f"Registers[{ri}]: "
            expect_keys(rj, ["name", "AddressOffset", "BitFields"], ["description"], rloc, errors, "a register")
            rname = check_name(rj["name"], "register name", rloc, errors)
            rloc = where(path, bname, rname)
            if rname in reg_names:
                errors.add(rloc, f"duplicate register name in the bundle (also Registers[{reg_names[rname]}])")
            reg_names.setdefault(rname, ri)
            roff = number(rj["AddressOffset"], "AddressOffset", rloc, errors)
            rdesc = string(rj.get("description", ""), "description", rloc, errors)
            if roff % word:
                errors.add(rloc, f"misaligned register: AddressOffset 0x{roff:x} is not a multiple of {word}")
            if roff + word > size:
                errors.add(rloc, f"register at AddressOffset 0x{roff:x} is outside its bundle "
                                 f"(BundleSizeInBytes 0x{size:x})")
            fields_json = rj["BitFields"]
            if not isinstance(fields_json, list) or not fields_json:
                errors.fatal(rloc, "BitFields must be a non-empty list")
            fields = []
            field_names = {}
            for fi, fj in enumerate(fields_json):
                floc = where(path, bname, rname) + f"BitFields[{fi}]: "
                expect_keys(fj, ["name", "Position", "Access", "ResetValue"], ["description"],
                            floc, errors, "a bit field")
                fname = check_name(fj["name"], "field name", floc, errors)
                floc = where(path, bname, rname, fname)
                if fname in field_names:
                    errors.add(floc, f"duplicate field name in the register (also BitFields[{field_names[fname]}])")
                field_names.setdefault(fname, fi)
                access = string(fj["Access"], "Access", floc, errors)
                if access not in ACCESS_TYPES:
                    errors.add(floc, f"unknown access type '{access}' (expected {', '.join(ACCESS_TYPES)})")
                reset = number(fj["ResetValue"], "ResetValue", floc, errors)
                fdesc = string(fj.get("description", ""), "description", floc, errors)
                pos = parse_position(fj["Position"], floc, errors, rf.data_width)
                if pos is None:
                    continue
                f = Field(fname, pos[0], pos[1], access, reset, fdesc)
                if reset >> f.width:
                    errors.add(floc, f"reset value 0x{reset:x} is wider than the {f.width}-bit field {f.bits()}")
                if access == "PulseOnW" and reset != 0:
                    errors.add(floc, f"a PulseOnW field reads 0 and must reset to 0, not 0x{reset:x}")
                for other in fields:
                    if other.mask & f.mask:
                        errors.add(floc, f"field {f.bits()} overlaps field '{other.name}' {other.bits()}")
                fields.append(f)
            reg = Register(rname, roff, rdesc, fields, bundle, len(rf.definitions))
            bundle.registers.append(reg)
            rf.definitions.append(reg)

    # Bundles must not overlap each other.
    spans = sorted(((b.base, b.base + b.size * b.count, b) for b in rf.bundles), key=lambda s: (s[0], s[1]))
    for (s0, e0, b0), (s1, e1, b1) in zip(spans, spans[1:]):
        if s1 < e0:
            errors.add(where(path, b1.name), f"bundle 0x{s1:x}..0x{e1 - 1:x} overlaps bundle '{b0.name}' "
                                             f"0x{s0:x}..0x{e0 - 1:x}")

    # Expand the arrays; every instance gets its own offset.
    by_offset = {}
    flat_names = {}
    # (Instance names cannot collide inside a bundle: "<register>_<index>" splits uniquely at
    # its last underscore. Flat names "<bundle>_<instance>" can collide across bundles.)
    for b in rf.bundles:
        for i in range(b.count):
            for reg in b.registers:
                inst = Instance(reg, i)
                iloc = where(path, b.name, reg.name)
                tag = f"instance {i} " if b.count > 1 else ""
                if inst.offset + word > rf.size:
                    errors.add(iloc, f"register {tag}at 0x{inst.offset:x} is outside SizeInBytes 0x{rf.size:x}")
                if inst.offset in by_offset:
                    o = by_offset[inst.offset]
                    errors.add(iloc, f"register {tag}at 0x{inst.offset:x} overlaps bundle '{o.reg.bundle.name}' "
                                     f"register '{o.reg.name}'" + (f" instance {o.index}" if o.reg.bundle.count > 1 else ""))
                else:
                    by_offset[inst.offset] = inst
                if inst.flat in flat_names and flat_names[inst.flat].reg.bundle is not b:
                    errors.add(iloc, f"duplicate name: the flat name '{inst.flat}' also names bundle "
                                     f"'{flat_names[inst.flat].reg.bundle.name}' register '{flat_names[inst.flat].name}'")
                flat_names.setdefault(inst.flat, inst)
                rf.instances.append(inst)
    rf.instances.sort(key=lambda inst: inst.offset)

    # Verilog port names must be unique too.
    ports = {}
    for reg in rf.definitions:
        for f in reg.fields:
            pname = port_name(reg, f)
            if pname in ports:
                errors.add(where(path, reg.bundle.name, reg.name, f.name),
                           f"duplicate name: Verilog port '{pname}' also names bundle '{ports[pname][0]}' "
                           f"register '{ports[pname][1]}' field '{ports[pname][2]}'")
            ports.setdefault(pname, (reg.bundle.name, reg.name, f.name))
    return rf


# --------------------------------------------------------------------------
# Helpers for the emitters
# --------------------------------------------------------------------------

def plural(count, noun):
    return f"{count} {noun}" + ("" if count == 1 else "s")


def hexw(value, digits):
    return f"0x{value:0{digits}x}"


def off_digits(rf):
    return max(3, (rf.addr_width + 3) // 4)


def c_string(text):
    out = ['"']
    for byte in text.encode("utf-8"):
        ch = chr(byte)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "?":
            out.append("?")
        elif 0x20 <= byte < 0x7F:
            out.append(ch)
        else:
            out.append(f"\\{byte:03o}")
    out.append('"')
    return "".join(out)


def comment_text(text):
    """Text safe inside a // comment (one line, no trailing backslash)."""
    return " ".join(text.split()).replace("\\", "/")


def md_text(text):
    return " ".join(text.split()).replace("|", "\\|")


def port_name(reg, f):
    suffix = {"RW": "_o", "RO": "_i", "PulseOnW": "_pulse_o"}.get(f.access, "_x")
    return f"{reg.bundle.name}_{reg.name}_{f.name}{suffix}"


def instance_list(reg):
    b = reg.bundle
    return [Instance(reg, i) for i in range(b.count)]


def header_banner(rf, comment):
    return (f"{comment} Generated by {GENERATOR} from {rf.source} -- do not edit.\n"
            f"{comment} Register file {rf.name}: AddrWidth {rf.addr_width}, SizeInBytes 0x{rf.size:x}, "
            f"{rf.interface}, {rf.flavor}, DataWidth {rf.data_width}"
            + (", VP-defined (not from the spec)" if rf.vp_defined else "") + ".\n")


def census(rf):
    regs = rf.instances
    return {
        "registers": len(regs),
        "definitions": len(rf.definitions),
        "fields": sum(len(r.fields) for r in rf.definitions),
        "ro": sum(1 for r in rf.definitions if r.access == "RO"),
        "rw": sum(1 for r in rf.definitions if r.access == "RW"),
        "pulse": sum(1 for r in rf.definitions for f in r.fields if f.access == "PulseOnW"),
    }


# --------------------------------------------------------------------------
# <name>_regs.h
# --------------------------------------------------------------------------

def emit_header(rf):
    d = off_digits(rf)
    c = census(rf)
    L = []
    w = L.append
    w(f"// {rf.name}_regs.h -- driver register map of {rf.name}.")
    w(header_banner(rf, "//").rstrip("\n"))
    w("//")
    w("// Offsets are absolute byte offsets in the register file's window. Per register:")
    w("//   kName, kOffset (instance 0), kOffsets[] (arrays: every instance), kRelOffset (within")
    w("//   the bundle), kReset (whole-register reset), kRwMask / kRoMask / kPulseMask;")
    w("// per field: kName, kAccess, kShift, kWidth, kMask (in place), kReset (right-aligned),")
    w("//   get(reg) and set(reg, value). namespace offsets lists every expanded register.")
    w("// Self-contained (only <cstdint>); regfile_desc() is defined in the generated")
    w(f"// {rf.name}_table.cpp (library pevp_regfile_tables).")
    w("#pragma once")
    w("")
    w("#include <cstdint>")
    w("")
    w("namespace pevp::regfile {")
    w("struct RegFileDesc;")
    w("}  // namespace pevp::regfile")
    w("")
    w(f"namespace pevp::regs::{rf.name} {{")
    w("")
    w(f"inline constexpr char kName[] = {c_string(rf.name)};")
    w(f"inline constexpr std::uint32_t kAddrWidth = {rf.addr_width};")
    w(f"inline constexpr std::uint32_t kSizeBytes = 0x{rf.size:x};")
    w(f"inline constexpr std::uint32_t kDataWidth = {rf.data_width};")
    w(f"inline constexpr char kInterface[] = {c_string(rf.interface)};")
    w(f"inline constexpr char kFlavor[] = {c_string(rf.flavor)};")
    w(f"inline constexpr bool kVpDefined = {'true' if rf.vp_defined else 'false'};")
    w(f"inline constexpr std::uint32_t kNumRegisters = {c['registers']};  // expanded (ArraySize applied)")
    w(f"inline constexpr std::uint32_t kNumDefinitions = {c['definitions']};  // unique register definitions")
    w(f"inline constexpr std::uint32_t kNumFieldDefinitions = {c['fields']};  // bit fields over the definitions")
    w("")
    w("// The runtime tables (pevp/regfile/desc.h), defined in the generated _table.cpp.")
    w("const ::pevp::regfile::RegFileDesc& regfile_desc();")
    for b in rf.bundles:
        w("")
        w(f"// ---- bundle {b.name}: base {hexw(b.base, d)}, {hexw(b.size, 1)} bytes x {b.count}")
        w(f"namespace {b.name} {{")
        w(f"inline constexpr std::uint32_t kBase = {hexw(b.base, d)};")
        w(f"inline constexpr std::uint32_t kBundleSize = 0x{b.size:x};  // array stride")
        w(f"inline constexpr std::uint32_t kArraySize = {b.count};")
        for reg in b.registers:
            insts = instance_list(reg)
            w("")
            desc = f" -- {comment_text(reg.description)}" if reg.description.strip() else ""
            w(f"// {reg.name} @ {hexw(insts[0].offset, d)}" + (f" + i * 0x{b.size:x}, i < {b.count}" if b.count > 1 else "")
              + f" ({reg.access}){desc}")
            w(f"namespace {reg.name} {{")
            w(f"inline constexpr char kName[] = {c_string(reg.name)};")
            w(f"inline constexpr std::uint32_t kOffset = {hexw(insts[0].offset, d)};")
            if b.count > 1:
                w(f"inline constexpr std::uint32_t kOffsets[{b.count}] = {{")
                for k in range(0, len(insts), 8):
                    w("    " + ", ".join(hexw(x.offset, d) for x in insts[k:k + 8]) + ",")
                w("};")
            w(f"inline constexpr std::uint32_t kRelOffset = 0x{reg.offset:x};")
            w(f"inline constexpr std::uint32_t kReset = {hexw(reg.reset, 8)};")
            w(f"inline constexpr std::uint32_t kRwMask = {hexw(reg.mask('RW'), 8)};")
            w(f"inline constexpr std::uint32_t kRoMask = {hexw(reg.mask('RO'), 8)};")
            w(f"inline constexpr std::uint32_t kPulseMask = {hexw(reg.mask('PulseOnW'), 8)};")
            for f in reg.fields:
                fdesc = f" -- {comment_text(f.description)}" if f.description.strip() else ""
                w(f"// {f.name} {f.bits()} {f.access}, reset 0x{f.reset:x}{fdesc}")
                w(f"namespace {f.name} {{")
                w(f"inline constexpr char kName[] = {c_string(f.name)};")
                w(f"inline constexpr char kAccess[] = {c_string(f.access)};")
                w(f"inline constexpr std::uint32_t kShift = {f.lsb};")
                w(f"inline constexpr std::uint32_t kWidth = {f.width};")
                w(f"inline constexpr std::uint32_t kMask = {hexw(f.mask, 8)};")
                w(f"inline constexpr std::uint32_t kReset = 0x{f.reset:x};")
                w("constexpr std::uint32_t get(std::uint32_t reg) { return (reg & kMask) >> kShift; }")
                w("constexpr std::uint32_t set(std::uint32_t reg, std::uint32_t value) {")
                w("  return (reg & ~kMask) | ((value << kShift) & kMask);")
                w("}")
                w(f"}}  // namespace {f.name}")
            w(f"}}  // namespace {reg.name}")
        w(f"}}  // namespace {b.name}")
    w("")
    w("// ---- every expanded register, by offset: <bundle>_<register>[_<instance>]")
    w("namespace offsets {")
    for inst in rf.instances:
        w(f"inline constexpr std::uint32_t {inst.flat} = {hexw(inst.offset, d)};")
    w("}  // namespace offsets")
    w("")
    w(f"}}  // namespace pevp::regs::{rf.name}")
    return "\n".join(L) + "\n"


# --------------------------------------------------------------------------
# <name>_regs_c.h
# --------------------------------------------------------------------------

def c_hex(value):
    return f"UINT32_C(0x{value:08x})"


def emit_c_header(rf):
    """The driver map in C99: one prefixed macro per constant (C has no namespaces), static inline accessors."""
    top = f"PEVP_{rf.name.upper()}"
    guard = f"{top}_REGS_C_H"
    c = census(rf)
    L = []
    w = L.append
    w(f"/* {rf.name}_regs_c.h -- driver register map of {rf.name}, in C99.")
    w(header_banner(rf, " *").rstrip("\n"))
    w(" *")
    w(" * The constants of the C++ header " + f"{rf.name}_regs.h" + ", one macro each, named")
    w(f" * {top}_<BUNDLE>_<REGISTER>_<WHAT> (offsets absolute in the register file's window; an arrayed")
    w(" * bundle's registers also have _OFFSET_AT(i) and _COUNT), and per field _SHIFT, _WIDTH, _MASK (in")
    w(" * place), _RESET (right-aligned), and static inline _get(reg) / _set(reg, value). Only <stdint.h>.")
    w(" * On the pe-vp platform bus an arr_seq face's register lies at the face's base plus its offset: pevp_map's")
    w(" * top, cluster, protect or vp_seq (pevp_get_map, pevp/pevp.h), or the preset's PEVP_PRESET_<FACE>_BASE.")
    w(" */")
    w(f"#ifndef {guard}")
    w(f"#define {guard}")
    w("")
    w("#include <stdint.h>")
    w("")
    w(f"#define {top}_SIZE_BYTES {c_hex(rf.size)}")
    w(f"#define {top}_ADDR_WIDTH {rf.addr_width}u")
    w(f"#define {top}_DATA_WIDTH {rf.data_width}u")
    w(f"#define {top}_NUM_REGISTERS {c['registers']}u")
    w(f"#define {top}_VP_DEFINED {1 if rf.vp_defined else 0}")
    for b in rf.bundles:
        bp = f"{top}_{b.name.upper()}"
        w("")
        w(f"/* ---- bundle {b.name}: base 0x{b.base:x}, 0x{b.size:x} bytes x {b.count} */")
        w(f"#define {bp}_BASE {c_hex(b.base)}")
        w(f"#define {bp}_BUNDLE_SIZE {c_hex(b.size)}")
        w(f"#define {bp}_ARRAY_SIZE {b.count}u")
        for reg in b.registers:
            rp = f"{bp}_{reg.name.upper()}"
            first = b.base + reg.offset
            desc = f" -- {comment_text(reg.description)}" if reg.description.strip() else ""
            w(f"/* {reg.name} ({reg.access}){desc.replace('*/', '* /')} */")
            w(f"#define {rp}_OFFSET {c_hex(first)}")
            if b.count > 1:
                w(f"#define {rp}_COUNT {b.count}u")
                w(f"#define {rp}_OFFSET_AT(i) ({c_hex(first)} + (uint32_t)(i) * {c_hex(b.size)})")
            w(f"#define {rp}_RESET {c_hex(reg.reset)}")
            w(f"#define {rp}_RW_MASK {c_hex(reg.mask('RW'))}")
            w(f"#define {rp}_RO_MASK {c_hex(reg.mask('RO'))}")
            w(f"#define {rp}_PULSE_MASK {c_hex(reg.mask('PulseOnW'))}")
            for f in reg.fields:
                fp = f"{rp}_{f.name.upper()}"
                fn = f"{rf.name}_{b.name}_{reg.name}_{f.name}".lower()
                w(f"/*   {f.name} {f.bits()} {f.access}, reset 0x{f.reset:x} */")
                w(f"#define {fp}_SHIFT {f.lsb}u")
                w(f"#define {fp}_WIDTH {f.width}u")
                w(f"#define {fp}_MASK {c_hex(f.mask)}")
                w(f"#define {fp}_RESET {c_hex(f.reset)}")
                w(f"static inline uint32_t pevp_{fn}_get(uint32_t reg) {{ return (reg & {fp}_MASK) >> {fp}_SHIFT; }}")
                w(f"static inline uint32_t pevp_{fn}_set(uint32_t reg, uint32_t value) {{")
                w(f"  return (reg & ~{fp}_MASK) | ((value << {fp}_SHIFT) & {fp}_MASK);")
                w("}")
    w("")
    w(f"#endif /* {guard} */")
    return "\n".join(L) + "\n"


# --------------------------------------------------------------------------
# <name>_table.cpp
# --------------------------------------------------------------------------

def emit_table(rf):
    d = off_digits(rf)
    c = census(rf)
    L = []
    w = L.append
    w(f"// {rf.name}_table.cpp -- the pevp::regfile tables of {rf.name}.")
    w(header_banner(rf, "//").rstrip("\n"))
    w(f'#include "{rf.name}_regs.h"')
    w("")
    w("#include <iterator>")
    w("")
    w('#include "pevp/regfile/desc.h"')
    w("")
    w(f"namespace pevp::regs::{rf.name} {{")
    w("namespace {")
    w("")
    w("using ::pevp::regfile::Access;")
    w("using ::pevp::regfile::BundleDesc;")
    w("using ::pevp::regfile::FieldDesc;")
    w("using ::pevp::regfile::RegFileDesc;")
    w("using ::pevp::regfile::RegisterDesc;")
    w("")
    w("// Fields of each unique register definition: name, lsb, width, access, reset, description.")
    for reg in rf.definitions:
        w(f"constexpr FieldDesc kFields{reg.definition}[] = {{  // {reg.bundle.name}.{reg.name}")
        for f in reg.fields:
            w(f"    {{{c_string(f.name)}, {f.lsb}, {f.width}, Access::{f.access}, 0x{f.reset:x}u, {c_string(f.description)}}},")
        w("};")
    w("")
    w("constexpr BundleDesc kBundles[] = {")
    for b in rf.bundles:
        w(f"    {{{c_string(b.name)}, {hexw(b.base, d)}u, 0x{b.size:x}u, {b.count}u}},")
    w("};")
    w("")
    w("// Expanded registers sorted by offset: name, definition name, bundle, instance, offset,")
    w("// definition index, description, fields.")
    w("constexpr RegisterDesc kRegisters[] = {")
    for inst in rf.instances:
        reg = inst.reg
        w(f"    {{{c_string(inst.name)}, {c_string(reg.name)}, {c_string(reg.bundle.name)}, {inst.index}u, "
          f"{hexw(inst.offset, d)}u, {reg.definition}u, {c_string(reg.description)}, "
          f"kFields{reg.definition}, std::size(kFields{reg.definition})}},")
    w("};")
    w("")
    w("constexpr RegFileDesc kRegFile = {")
    w(f"    {c_string(rf.name)},")
    w(f"    {rf.addr_width}u,")
    w(f"    0x{rf.size:x}u,")
    w(f"    {c_string(rf.interface)},")
    w(f"    {c_string(rf.flavor)},")
    w(f"    {rf.data_width}u,")
    w(f"    {'true' if rf.vp_defined else 'false'},")
    w("    kBundles,")
    w("    std::size(kBundles),")
    w("    kRegisters,")
    w("    std::size(kRegisters),")
    w("    kNumDefinitions,")
    w("    kNumFieldDefinitions,")
    w("};")
    w("")
    w("static_assert(std::size(kRegisters) == kNumRegisters);")
    w("")
    w("}  // namespace")
    w("")
    w("const ::pevp::regfile::RegFileDesc& regfile_desc() { return kRegFile; }")
    w("")
    w(f"}}  // namespace pevp::regs::{rf.name}")
    return "\n".join(L) + "\n"


# --------------------------------------------------------------------------
# <name>.v
# --------------------------------------------------------------------------

def vrange(width):
    return f"[{width - 1}:0] " if width > 1 else ""


class Counter:
    """A 48-bit hardware counter: the register pair <name>_lsb (cntr_lsb [31:0]) and <name>_msb (cntr_msb [15:0])
    of one bundle instance, both RO. The generated RTL keeps the count itself (the model's CounterRef)."""

    def __init__(self, lsb, msb):
        self.lsb, self.msb = lsb, msb  # Instance
        base = lsb.reg.name[:-len("_lsb")]
        self.name = base if lsb.reg.bundle.count == 1 else f"{base}_{lsb.index}"
        self.flat = f"{lsb.reg.bundle.name}_{self.name}"
        self.reset = lsb.reg.fields[0].reset | (msb.reg.fields[0].reset << 32)

    @property
    def inc_port(self):
        return f"{self.flat}_inc_i"

    @property
    def value_port(self):
        return f"{self.flat}_cnt_o"

    @property
    def flop(self):
        return f"{self.flat}_cnt_q"


def is_counter_half(reg, half):
    """True when `reg` is the `half` ("lsb" / "msb") register of a 48-bit counter."""
    want = {"lsb": ("cntr_lsb", 31, 0), "msb": ("cntr_msb", 15, 0)}[half]
    return (reg.name.endswith("_" + half) and len(reg.fields) == 1 and reg.fields[0].access == "RO"
            and (reg.fields[0].name, reg.fields[0].msb, reg.fields[0].lsb) == want)


def counters(rf):
    """The 48-bit counters of `rf`, in offset order of their _lsb register."""
    by_key = {(inst.reg.bundle.name, inst.index, inst.reg.name): inst for inst in rf.instances}
    found = []
    for inst in rf.instances:
        if not is_counter_half(inst.reg, "lsb"):
            continue
        msb = by_key.get((inst.reg.bundle.name, inst.index, inst.reg.name[:-len("_lsb")] + "_msb"))
        if msb is not None and is_counter_half(msb.reg, "msb"):
            found.append(Counter(inst, msb))
    return found


def counter_halves(rf):
    """{offset: (Counter, "lsb" | "msb")} for every register that is half of a counter."""
    halves = {}
    for c in counters(rf):
        halves[c.lsb.offset] = (c, "lsb")
        halves[c.msb.offset] = (c, "msb")
    return halves


def counter_definitions(rf):
    """The register definitions whose every instance is half of a counter (they get no _i port)."""
    halves = counter_halves(rf)
    return {id(reg) for reg in rf.definitions
            if all(inst.offset in halves for inst in instance_list(reg))}


def rtl_ports(rf):
    """Every port of the generated module after the APB pins: (direction, width, name, note, kind, payload).
    kind: "rw" / "ro" / "pulse" (payload: (reg, field), packed over the bundle's instances), "clear", or
    "inc" / "cnt" (payload: Counter)."""
    skip = counter_definitions(rf)
    ports = []
    for reg in rf.definitions:
        if id(reg) in skip:
            continue
        n = reg.bundle.count
        for f in reg.fields:
            kind = {"RW": "rw", "RO": "ro", "PulseOnW": "pulse"}[f.access]
            direction = "input " if f.access == "RO" else "output"
            ports.append((direction, f.width * n, port_name(reg, f),
                          f"{reg.bundle.name}.{reg.name}.{f.name} {f.bits()} {f.access}" + (f" x{n}" if n > 1 else ""),
                          kind, (reg, f)))
    cs = counters(rf)
    if cs:
        ports.append(("input ", 1, "counters_clear_i", "1 = every counter of this file returns to 0 at the edge",
                      "clear", None))
    for c in cs:
        ports.append(("input ", 32, c.inc_port, f"{c.lsb.reg.bundle.name}.{c.name}: added to the count at each edge",
                      "inc", c))
        ports.append(("output", 48, c.value_port, f"{c.lsb.reg.bundle.name}.{c.name}: the 48-bit count", "cnt", c))
    return ports


def bit_runs(bits):
    """[(lo, hi)] runs of consecutive bit numbers in the ascending list `bits`."""
    runs = []
    for b in bits:
        if runs and runs[-1][1] + 1 == b:
            runs[-1] = (runs[-1][0], b)
        else:
            runs.append((b, b))
    return runs


def emit_verilog(rf):
    aw = rf.addr_width
    dw = rf.data_width
    adig = (aw + 3) // 4
    edge = "posedge" if rf.flavor == "POSEDGE" else "negedge"
    halves = counter_halves(rf)
    cs = counters(rf)
    skip = counter_definitions(rf)

    def addr(value):
        return f"{aw}'h{value:0{adig}x}"

    def const(width, value):
        return f"{width}'h{value:x}"

    def bits(f):
        return f"[{f.msb}:{f.lsb}]" if f.width > 1 else f"[{f.lsb}]"

    L = []
    w = L.append
    w(f"// {rf.name}.v -- APB4 slave implementing register file {rf.name}.")
    w(header_banner(rf, "//").rstrip("\n"))
    w("//")
    w("// APB4 (AMBA APB Protocol Specification, APB4), no wait states: PREADY = 1. A transfer's access phase is")
    w("// PSEL & PENABLE. PADDR is a byte address; only the 32-bit-aligned offset of a register is mapped.")
    w("// PSTRB: a write changes only the byte lanes whose strobe is 1 (RW bits and PulseOnW bits alike);")
    w("//   reads return the whole word (APB4 has no read strobes).")
    w("// PPROT: with PRIVILEGED_ONLY = 1 a transfer without PPROT[0] (privileged) answers PSLVERR, reads 0")
    w("//   and changes nothing; PPROT[2:1] are not used.")
    w("// Errors: a misaligned offset always answers PSLVERR, reads 0 and writes nothing; an aligned offset with")
    w("//   no register does the same with UNMAPPED_ERROR = 1 (the default), and reads 0 / ignores the write")
    w("//   without PSLVERR with UNMAPPED_ERROR = 0. PRDATA is 0 except in a successful read's access phase.")
    w("// RW fields: flops reset (PRESETn, asynchronous, active low) to the schema's ResetValue, written from")
    w("//   PWDATA on an access-phase write; each drives an output <bundle>_<register>_<field>_o.")
    w("// RO fields: read combinationally from the input <bundle>_<register>_<field>_i; writes are")
    w("//   ignored without an error; their ResetValue is what the driving hardware presents at reset.")
    w("// 48-bit counters (an RO register pair <name>_lsb cntr_lsb [31:0] + <name>_msb cntr_msb [15:0] of one")
    w("//   bundle instance) are kept here: the count resets to the pair's ResetValue, adds the input")
    w("//   <bundle>_<name>_inc_i [31:0] at every clock edge and wraps modulo 2^48; counters_clear_i = 1 sets")
    w("//   every count to 0 at the edge instead (increments of that cycle are dropped). The count drives")
    w("//   <bundle>_<name>_cnt_o [47:0]; the _lsb register reads count[31:0], the _msb register count[47:32].")
    w("// PulseOnW fields: a write of 1 raises <bundle>_<register>_<field>_pulse_o for exactly one")
    w("//   clock cycle after the access phase; they always read 0.")
    w("// Array bundles (ArraySize > 1): one port per field, instances packed, instance i at")
    w("//   [i*W +: W]. Storage flops are named <bundle>_<register>[_<instance>]_<field>_q.")
    w(f"// Flops are clocked on the {edge} of PCLK (RegfileFlavor {rf.flavor}).")
    w("")
    w("`default_nettype none")
    w("")
    w(f"module {rf.name} #(")
    w("  parameter PRIVILEGED_ONLY = 0,  // 1: only PPROT[0] = 1 transfers are answered (a protected face)")
    w("  parameter UNMAPPED_ERROR = 1    // 1: an aligned offset with no register answers PSLVERR")
    w(") (")
    ports = [
        ("input ", 1, "PCLK", None),
        ("input ", 1, "PRESETn", None),
        ("input ", 1, "PSEL", None),
        ("input ", 1, "PENABLE", None),
        ("input ", 1, "PWRITE", None),
        ("input ", aw, "PADDR", None),
        ("input ", dw, "PWDATA", None),
        ("input ", dw // 8, "PSTRB", None),
        ("input ", 3, "PPROT", None),
        ("output", dw, "PRDATA", None),
        ("output", 1, "PREADY", None),
        ("output", 1, "PSLVERR", None),
    ] + [(d, width, name, note) for d, width, name, note, _, _ in rtl_ports(rf)]
    for i, (direction, width, name, note) in enumerate(ports):
        sep = "," if i + 1 < len(ports) else ""
        w(f"  {direction} wire {vrange(width)}{name}{sep}" + (f"  // {note}" if note else ""))
    w(");")
    w("")
    w("  wire access = PSEL & PENABLE;")
    w("  wire allowed = (PRIVILEGED_ONLY == 0) | PPROT[0];")
    w("  wire aligned = PADDR[1:0] == 2'b00;")
    w("  reg hit;  // PADDR is a register's offset (set by the decode below)")
    w("  wire wr_en = access & PWRITE & allowed;")
    w(f"  wire [{dw - 1}:0] lanes = {{" + ", ".join(f"{{8{{PSTRB[{i}]}}}}" for i in reversed(range(dw // 8))) + "};")
    w("  assign PREADY = 1'b1;")

    # Storage and pulses, one always block per register instance.
    for reg in rf.definitions:
        if id(reg) in skip:
            continue
        stored = [f for f in reg.fields if f.access != "RO"]
        if not stored:
            continue
        n = reg.bundle.count
        w("")
        w(f"  // {reg.bundle.name}.{reg.name}")
        for inst in instance_list(reg):
            for f in stored:
                w(f"  reg {vrange(f.width)}{reg.bundle.name}_{inst.name}_{f.name}_q;")
        for inst in instance_list(reg):
            sel = f"wr_en && PADDR == {addr(inst.offset)}"
            w(f"  always @({edge} PCLK or negedge PRESETn) begin")
            w("    if (!PRESETn) begin")
            for f in stored:
                w(f"      {reg.bundle.name}_{inst.name}_{f.name}_q <= {const(f.width, f.reset)};")
            w("    end else begin")
            rw = [f for f in stored if f.access == "RW"]
            if rw:
                w(f"      if ({sel}) begin")
                for f in rw:
                    q = f"{reg.bundle.name}_{inst.name}_{f.name}_q"
                    w(f"        {q} <= ({q} & ~lanes{bits(f)}) | (PWDATA{bits(f)} & lanes{bits(f)});")
                w("      end")
            for f in stored:
                if f.access == "PulseOnW":
                    w(f"      {reg.bundle.name}_{inst.name}_{f.name}_q <= ({sel}) ? "
                      f"(PWDATA{bits(f)} & lanes{bits(f)}) : {const(f.width, 0)};")
            w("    end")
            w("  end")
        for f in stored:
            names = [f"{reg.bundle.name}_{inst.name}_{f.name}_q" for inst in instance_list(reg)]
            value = names[0] if n == 1 else "{" + ", ".join(reversed(names)) + "}"
            w(f"  assign {port_name(reg, f)} = {value};")

    # Counters.
    if cs:
        w("")
        w("  // 48-bit counters")
        for c in cs:
            w(f"  reg [47:0] {c.flop};")
            w(f"  always @({edge} PCLK or negedge PRESETn) begin")
            w(f"    if (!PRESETn) {c.flop} <= {const(48, c.reset)};")
            w(f"    else if (counters_clear_i) {c.flop} <= 48'h0;")
            w(f"    else {c.flop} <= {c.flop} + {{16'h0, {c.inc_port}}};")
            w("  end")
            w(f"  assign {c.value_port} = {c.flop};")

    # Read mux and decode.
    w("")
    w("  // Read data and address decode (combinational).")
    w(f"  reg [{dw - 1}:0] rdata;")
    w("  always @* begin")
    w(f"    rdata = {dw}'h0;")
    w("    hit = 1'b1;")
    w("    case (PADDR)")
    for inst in rf.instances:
        reg = inst.reg
        n = reg.bundle.count
        items = []
        label = f"{reg.bundle.name}.{inst.name}"
        if inst.offset in halves:
            c, half = halves[inst.offset]
            src = f"{c.flop}[31:0]" if half == "lsb" else f"{c.flop}[47:32]"
            f = reg.fields[0]
            items.append(f"rdata{bits(f)} = {src};")
        else:
            for f in reg.fields:
                dst = f"rdata{bits(f)}"
                if f.access == "RW":
                    items.append(f"{dst} = {reg.bundle.name}_{inst.name}_{f.name}_q;")
                elif f.access == "RO":
                    p = port_name(reg, f)
                    if n > 1:
                        src = f"{p}[{inst.index * f.width + f.width - 1}:{inst.index * f.width}]" if f.width > 1 \
                            else f"{p}[{inst.index}]"
                    else:
                        src = p
                    items.append(f"{dst} = {src};")
        if not items:
            w(f"      {addr(inst.offset)}: rdata = {dw}'h0;  // {label} (write-only pulses read 0)")
        elif len(items) == 1:
            w(f"      {addr(inst.offset)}: {items[0]}  // {label}")
        else:
            w(f"      {addr(inst.offset)}: begin  // {label}")
            for it in items:
                w(f"        {it}")
            w("      end")
    w("      default: hit = 1'b0;")
    w("    endcase")
    w("  end")
    w("")
    w("  wire ok = allowed & hit;")
    w(f"  assign PRDATA = (access & ~PWRITE & ok) ? rdata : {dw}'h0;")
    w("  assign PSLVERR = access & (~allowed | (~hit & ((UNMAPPED_ERROR != 0) | ~aligned)));")
    w("")
    used_wdata = 0
    for reg in rf.definitions:
        if id(reg) not in skip:
            for f in reg.fields:
                if f.access != "RO":
                    used_wdata |= f.mask
    unused = [f"PWDATA[{hi}:{lo}]" if hi != lo else f"PWDATA[{lo}]" for lo, hi in bit_runs(
        [b for b in range(dw) if not (used_wdata >> b) & 1])]
    w("  // PWDATA bits no writable field uses, the lanes' copies of them, and PPROT[2:1], which carry nothing a")
    w("  // register file decides on. Waived: Verilator UNUSEDSIGNAL (an APB slave receives the whole bus).")
    w("  /* verilator lint_off UNUSEDSIGNAL */")
    w("  wire unused_ok = &{1'b0, " + ", ".join(list(reversed(unused)) + ["lanes", "PPROT[2:1]"]) + "};")
    w("  /* verilator lint_on UNUSEDSIGNAL */")
    w("")
    w("endmodule")
    w("")
    w("`default_nettype wire")
    return "\n".join(L) + "\n"


# --------------------------------------------------------------------------
# <name>_rtl.h
# --------------------------------------------------------------------------

def sc_type(width):
    """The SystemC type Verilator's --sc output gives a port of `width` bits."""
    if width == 1:
        return "bool"
    if width <= 32:
        return "std::uint32_t"
    if width <= 64:
        return "std::uint64_t"
    return f"sc_dt::sc_bv<{width}>"


def emit_rtl_pins(rf):
    """A header-only SystemC companion of the Verilated <name>.v (verilator --sc): one signal per register port,
    their binding, and the register file's state read back from the pins in the model's terms (register index
    of RegFileDesc, field index of its definition), so a platform or a checker can hold the RTL beside the TLM
    model without knowing a port name."""
    cs = counters(rf)
    halves = counter_halves(rf)
    ports = rtl_ports(rf)
    by_field = {(id(p[5][0]), p[5][1].name): p for p in ports if p[4] in ("rw", "ro", "pulse")}
    index_of = {inst.offset: i for i, inst in enumerate(rf.instances)}
    cidx = {id(c): k for k, c in enumerate(cs)}
    L = []
    w = L.append
    w(f"// {rf.name}_rtl.h -- the SystemC pins of the Verilated register file {rf.name} (verilator --sc).")
    w(header_banner(rf, "//").rstrip("\n"))
    w("//")
    w(f"// Pins: one signal per register port of V{rf.name} (the APB pins are the bus's own), bind() to connect")
    w("// them, and the register file read back from the pins in RegFileDesc terms: value(reg) is what the RTL")
    w("// stores for register index `reg` (RW flops from their _o ports, RO inputs as driven, counters from")
    w("// their _cnt_o ports; PulseOnW bits 0), drive_ro() sets a plain RO field's input, increment() and")
    w("// clear_counters() drive the counters' inputs, pulses(reg) reads a register's PulseOnW outputs.")
    w("// Inputs are written from any process (SC_MANY_WRITERS); the caller owns their timing.")
    w("#pragma once")
    w("")
    w("#include <array>")
    w("#include <cstddef>")
    w("#include <cstdint>")
    w("#include <systemc>")
    w("#include <vector>")
    w("")
    w(f'#include "V{rf.name}.h"')
    w("")
    w(f"namespace pevp::rtl::{rf.name} {{")
    w("")
    w(f"inline constexpr std::size_t kNumRegisters = {len(rf.instances)};")
    w(f"inline constexpr std::size_t kNumCounters = {len(cs)};")
    w("// Each counter's _lsb and _msb register indices, in the order of the counters' ports.")
    w("struct CounterRegs {")
    w("  std::uint32_t lsb, msb;")
    w("};")
    if cs:
        w(f"inline constexpr std::array<CounterRegs, kNumCounters> kCounterRegs{{{{")
        for c in cs:
            w(f"    {{{index_of[c.lsb.offset]}u, {index_of[c.msb.offset]}u}},  // {c.flat}")
        w("}};")
    else:
        w("inline constexpr std::array<CounterRegs, 0> kCounterRegs{};")
    pulse_regs = [i for i, inst in enumerate(rf.instances) if any(f.access == "PulseOnW" for f in inst.reg.fields)]
    w("// The registers with PulseOnW fields.")
    w(f"inline constexpr std::array<std::size_t, {len(pulse_regs)}> kPulseRegs{{" +
      (("{" + ", ".join(str(i) for i in pulse_regs) + "}") if pulse_regs else "") + "};")
    w("")
    w("namespace detail {")
    w("inline std::uint32_t field(bool v, unsigned, unsigned) { return v ? 1u : 0u; }")
    w("inline std::uint32_t field(std::uint32_t v, unsigned lo, unsigned w) {")
    w("  return static_cast<std::uint32_t>((std::uint64_t{v} >> lo) & ((std::uint64_t{1} << w) - 1));")
    w("}")
    w("inline std::uint32_t field(std::uint64_t v, unsigned lo, unsigned w) {")
    w("  return static_cast<std::uint32_t>((v >> lo) & ((std::uint64_t{1} << w) - 1));")
    w("}")
    w("template <int N>")
    w("std::uint32_t field(const sc_dt::sc_bv<N>& v, unsigned lo, unsigned w) {")
    w("  return static_cast<std::uint32_t>(v.range(static_cast<int>(lo + w - 1), static_cast<int>(lo)).to_uint());")
    w("}")
    w("inline bool with_field(bool, unsigned, unsigned, std::uint32_t x) { return (x & 1u) != 0; }")
    w("inline std::uint32_t with_field(std::uint32_t v, unsigned lo, unsigned w, std::uint32_t x) {")
    w("  const std::uint64_t m = ((std::uint64_t{1} << w) - 1) << lo;")
    w("  return static_cast<std::uint32_t>((std::uint64_t{v} & ~m) | ((std::uint64_t{x} << lo) & m));")
    w("}")
    w("inline std::uint64_t with_field(std::uint64_t v, unsigned lo, unsigned w, std::uint32_t x) {")
    w("  const std::uint64_t m = ((std::uint64_t{1} << w) - 1) << lo;")
    w("  return (v & ~m) | ((std::uint64_t{x} << lo) & m);")
    w("}")
    w("template <int N>")
    w("sc_dt::sc_bv<N> with_field(sc_dt::sc_bv<N> v, unsigned lo, unsigned w, std::uint32_t x) {")
    w("  v.range(static_cast<int>(lo + w - 1), static_cast<int>(lo)) = x;")
    w("  return v;")
    w("}")
    w("}  // namespace detail")
    w("")
    w("class Pins {")
    w(" public:")
    def initial(kind, payload):
        """An RO input starts at what the driving hardware presents at reset: the field's ResetValue."""
        if kind != "ro":
            return 0
        reg, f = payload
        return sum(f.reset << (i * f.width) for i in range(reg.bundle.count))

    def literal(width, value):
        if width == 1:
            return "true" if value else "false"
        if width <= 64:
            return f"{sc_type(width)}{{0x{value:x}u}}"
        return f'{sc_type(width)}("0x{value:x}")'

    for d, width, name, note, kind, payload in ports:
        policy = ", sc_core::SC_MANY_WRITERS" if d.strip() == "input" else ""
        init = initial(kind, payload)
        if init:
            w(f"  sc_core::sc_signal<{sc_type(width)}{policy}> {name}{{\"{name}\", {literal(width, init)}}};")
        else:
            w(f"  sc_core::sc_signal<{sc_type(width)}{policy}> {name}{{\"{name}\"}};")
    w("")
    w(f"  void bind(V{rf.name}& m) {{")
    for _, _, name, _, _, _ in ports:
        w(f"    m.{name}({name});")
    w("  }")
    w("")
    def field_terms(inst, keep):
        """The C++ terms reading instance `inst`'s fields that `keep` selects from their ports, in place."""
        terms = []
        for f in inst.reg.fields:
            if not keep(f):
                continue
            t = f"detail::field({by_field[(id(inst.reg), f.name)][2]}.read(), {inst.index * f.width}, {f.width})"
            terms.append(t if f.lsb == 0 else f"({t} << {f.lsb})")
        return terms

    w("  // What the RTL stores for register `reg` (0 for an index out of range).")
    w("  std::uint32_t value(std::size_t reg) const {")
    w("    switch (reg) {")
    for i, inst in enumerate(rf.instances):
        reg = inst.reg
        terms = []
        if inst.offset in halves:
            c, half = halves[inst.offset]
            terms.append(f"detail::field({c.value_port}.read(), {0 if half == 'lsb' else 32}, {32 if half == 'lsb' else 16})")
        else:
            terms += field_terms(inst, lambda f: f.access != "PulseOnW")
        w(f"      case {i}: return " + (" | ".join(terms) if terms else "0") + f";  // {reg.bundle.name}.{inst.name}")
    w("      default: return 0;")
    w("    }")
    w("  }")
    w("")
    w("  // The PulseOnW outputs of register `reg`, in their register bit positions.")
    w("  std::uint32_t pulses(std::size_t reg) const {")
    w("    switch (reg) {")
    for i, inst in enumerate(rf.instances):
        reg = inst.reg
        terms = field_terms(inst, lambda f: f.access == "PulseOnW")
        if terms:
            w(f"      case {i}: return " + " | ".join(terms) + f";  // {reg.bundle.name}.{inst.name}")
    w("      default: return 0;")
    w("    }")
    w("  }")
    w("")
    w("  // Drives field `field` (its index in the register's field list) of register `reg` when it is a plain RO")
    w("  // field (an input of the RTL); false for any other field.")
    w("  bool drive_ro(std::size_t reg, std::size_t field, std::uint32_t v) {")
    w("    switch (reg * 64 + field) {")
    for i, inst in enumerate(rf.instances):
        reg = inst.reg
        if inst.offset in halves:
            continue
        for k, f in enumerate(reg.fields):
            if f.access != "RO":
                continue
            p = by_field[(id(reg), f.name)]
            w(f"      case {i * 64 + k}: {p[2]}_shadow_ = detail::with_field({p[2]}_shadow_, {inst.index * f.width}, "
              f"{f.width}, v); {p[2]}.write({p[2]}_shadow_); return true;")
    w("      default: return false;")
    w("    }")
    w("  }")
    w("")
    def counter_switch(comment, signature, case, default, unused):
        """A member function that switches on the counter index: one case per counter."""
        w(f"  // {comment}")
        w(f"  {signature} {{")
        if cs:
            w("    switch (counter) {")
            for k, c in enumerate(cs):
                w(f"      case {k}: {case(c)}")
            w(f"      default: {default}")
            w("    }")
        else:
            for line in unused:
                w(f"    {line}")
        w("  }")

    counter_switch("Drives counter `counter`'s increment input (added at every clock edge while it is held).",
                   "void increment(std::size_t counter, std::uint32_t n)",
                   lambda c: f"{c.inc_port}.write(n); break;", "break;", ["(void)counter;", "(void)n;"])
    counter_switch("Counter `counter`'s 48-bit count (its _cnt_o port).",
                   "std::uint64_t count(std::size_t counter) const",
                   lambda c: f"return {c.value_port}.read();", "return 0;", ["(void)counter;", "return 0;"])
    w("  // Drives counters_clear_i (no effect in a file without counters).")
    w("  void clear_counters(bool on) {")
    w("    counters_clear_i.write(on);" if cs else "    (void)on;")
    w("  }")
    counter_switch("The counter inputs as the RTL samples them now.",
                   "std::uint32_t increment_input(std::size_t counter) const",
                   lambda c: f"return {c.inc_port}.read();", "return 0;", ["(void)counter;", "return 0;"])
    w("  bool clear_input() const { return " + ("counters_clear_i.read()" if cs else "false") + "; }")
    w("")
    w("  // The events of every RW and PulseOnW output (what the hardware side would watch).")
    w("  void output_events(std::vector<const sc_core::sc_event*>& out) const {")
    outs = [name for d, width, name, note, kind, _ in ports if kind in ("rw", "pulse")]
    for name in outs:
        w(f"    out.push_back(&{name}.value_changed_event());")
    if not outs:
        w("    (void)out;")
    w("  }")
    w("")
    w(" private:")
    for d, width, name, note, kind, payload in ports:
        if kind == "ro":
            init = initial(kind, payload)
            w(f"  {sc_type(width)} {name}_shadow_{{{literal(width, init) if init else ''}}};")
    w("};")
    w("")
    w(f"}}  // namespace pevp::rtl::{rf.name}")
    return "\n".join(L) + "\n"


# --------------------------------------------------------------------------
# <name>.md
# --------------------------------------------------------------------------

def emit_markdown(rf):
    d = off_digits(rf)
    c = census(rf)
    L = []
    w = L.append
    w(f"# Register file `{rf.name}`")
    w("")
    w(f"Generated by `{GENERATOR}` from `{rf.source}` -- do not edit; edit the schema.")
    if rf.vp_defined:
        w("")
        w("**VP-defined:** this register file is the virtual platform's own; it is not described by the spec.")
    w("")
    w("| AddrWidth | SizeInBytes | InterfaceType | RegfileFlavor | DataWidth |")
    w("|---|---|---|---|---|")
    w(f"| {rf.addr_width} | 0x{rf.size:x} | {rf.interface} | {rf.flavor} | {rf.data_width} |")
    w("")
    lo = rf.instances[0].offset
    hi = rf.instances[-1].offset
    w(f"{plural(c['definitions'], 'register definition')} with {plural(c['fields'], 'bit field')}; "
      f"{plural(c['registers'], 'register')} after array expansion, at "
      f"{hexw(lo, d)}..{hexw(hi + rf.data_width // 8 - 1, d)} "
      f"({c['ro']} RO / {c['rw']} RW definitions, {plural(c['pulse'], 'PulseOnW field')}). Offsets are byte offsets in the window; every register is "
      f"{rf.data_width} bits. A register is RO when all its fields are RO, otherwise RW.")
    w("")
    w("Access types: **RW** read/write; **RO** read-only (writes ignored); **PulseOnW** writing 1 fires a "
      "one-cycle pulse, reads 0.")
    w("")
    w("## Bundles")
    w("")
    w("| bundle | base | size (stride) | ArraySize | span | registers |")
    w("|---|---|---|---|---|---|")
    for b in rf.bundles:
        w(f"| `{b.name}` | {hexw(b.base, d)} | 0x{b.size:x} | {b.count} | "
          f"{hexw(b.base, d)}..{hexw(b.base + b.size * b.count - 1, d)} | {len(b.registers)} |")
    w("")
    w("## Registers by offset")
    w("")
    w("| offset | register | bundle | access | reset | fields |")
    w("|---|---|---|---|---|---|")
    for inst in rf.instances:
        reg = inst.reg
        fields = ", ".join(f"{f.name}{f.bits()}" for f in reg.fields)
        w(f"| {hexw(inst.offset, d)} | `{inst.name}` | `{reg.bundle.name}` | {reg.access_set()} | "
          f"{hexw(reg.reset, 8)} | {fields} |")
    w("")
    w("## Register definitions")
    for b in rf.bundles:
        for reg in b.registers:
            insts = instance_list(reg)
            w("")
            w(f"### `{b.name}.{reg.name}`")
            w("")
            if b.count > 1:
                w(f"Offsets {hexw(insts[0].offset, d)} + i x 0x{b.size:x}, i = 0..{b.count - 1} "
                  f"(instances `{insts[0].name}`..`{insts[-1].name}`). Reset {hexw(reg.reset, 8)}.")
            else:
                w(f"Offset {hexw(insts[0].offset, d)}. Reset {hexw(reg.reset, 8)}.")
            if reg.description.strip():
                w("")
                w(md_text(reg.description))
            w("")
            w("| field | bits | access | reset | description |")
            w("|---|---|---|---|---|")
            for f in sorted(reg.fields, key=lambda f: -f.lsb):
                w(f"| `{f.name}` | {f.bits()} | {f.access} | 0x{f.reset:x} | {md_text(f.description)} |")
    return "\n".join(L) + "\n"


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------

def write_all(out_dir, files):
    """Writes every file or none: temporaries first, then renames."""
    os.makedirs(out_dir, exist_ok=True)
    umask = os.umask(0)
    os.umask(umask)
    temps = []
    try:
        for name, text in files:
            fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=out_dir)
            temps.append((tmp, os.path.join(out_dir, name)))
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
            os.chmod(tmp, 0o666 & ~umask)
        for tmp, final in temps:
            os.replace(tmp, final)
        temps = []
    finally:
        for tmp, _ in temps:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="regfile_gen.py",
        description="Generate the driver header, the model tables, the Verilog APB slave and the "
                    "Markdown page of one register-file JSON schema.")
    parser.add_argument("schema", help="the register-file schema (<name>.json)")
    parser.add_argument("--out-dir", required=True, help="directory for the generated files")
    args = parser.parse_args(argv)

    rf, messages = read_schema(args.schema)
    if rf is None:
        for msg in messages:
            print(f"regfile_gen: error: {msg}", file=sys.stderr)
        print(f"regfile_gen: {args.schema}: {len(messages)} schema error(s); nothing written", file=sys.stderr)
        return 1
    files = [
        (f"{rf.name}_regs.h", emit_header(rf)),
        (f"{rf.name}_regs_c.h", emit_c_header(rf)),
        (f"{rf.name}_table.cpp", emit_table(rf)),
        (f"{rf.name}.v", emit_verilog(rf)),
        (f"{rf.name}_rtl.h", emit_rtl_pins(rf)),
        (f"{rf.name}.md", emit_markdown(rf)),
    ]
    try:
        write_all(args.out_dir, files)
    except OSError as exc:
        print(f"regfile_gen: error: {args.out_dir}: cannot write: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
