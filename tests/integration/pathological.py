"""Builders of the pathological inputs that once made stackcheck's work grow without bound, shared
by the time-bounded tests and the benchmarks in bench/ (which call this file as a script):

  diff SIZE OUT_DIR [--shape S]   two snapshots a.json and b.json, SIZE items a side, half shared
                                  (shapes: findings, probes, stages, modules, lists, keys,
                                  repeats, platforms, mixed)
  rpath-elf OUT_DIR [--entries N] [--missing M]
                                  OUT_DIR/libwide.so: an RPATH of N distinct absent directories and
                                  M DT_NEEDED libraries found nowhere
  rpath-chain OUT_DIR [--depth D] [--shared K]
                                  OUT_DIR/lib/libc00000.so needs libc00001.so ... to depth D; each
                                  library has an RPATH of K shared absent directories and its own
                                  absent one; only the first library's RPATH also names the
                                  directory they are all in
  bundles OUT_FILE [--count N] [--kind tiny-zstd|zlib-bomb|zlib-table]
                                  a shared object whose .hip_fatbin holds N compressed bundles

Everything is generated at run time; nothing large is committed."""
import argparse
import json
import os
import shutil
import struct
import subprocess
import tempfile
import zlib

CC = shutil.which("cc") or "gcc"

# ---- snapshots for diff ----

SHAPES = ("findings", "probes", "stages", "modules", "lists", "keys", "repeats", "platforms",
          "mixed")


def _probe(pid, findings=(), facts=None, status="warn"):
    return {"id": pid, "backend": "none", "status": status, "reason": None, "duration_ms": 1.5,
            "applicable": True, "facts": facts or {}, "findings": list(findings)}


def _finding(i):
    return {"id": "x.finding-%d" % i, "severity": "warn", "message": "finding number %d" % i,
            "hint": None}


def _platform_probes(items, side):
    """a: an NVIDIA node, b: an AMD node, each with SIZE distinct devices in its driver's list and
    in its runtime's (in reverse order: matched by PCI address), SIZE installs or toolkits, and
    torch mapping SIZE collective libraries and needing them from its files."""
    mem = "vram_bytes" if side else "total_memory_bytes"
    dev = [{"pci_address": "0000:%02x:%02x.0" % (i // 256 % 256, i % 256),
            "name" if side else "model": "gpu%d" % i, "arch": "sm_%d" % i, mem: i}
           for i in items]
    roots = [{"root": "/opt/r%d" % i, "version": "%d" % i} for i in items]
    libs = [{"name": ("librccl.so.%d" if side else "libnccl.so.%d") % i, "root": "/opt/r%d" % i}
            for i in items]
    drv, rt = ("driver.amd", "runtime.hip") if side else ("driver.nvidia", "runtime.cuda")
    return [_probe(drv, facts={"devices": dev}, status="pass"),
            _probe(rt, facts={"devices": dev[::-1], "installs" if side else "toolkits": roots}),
            _probe("framework.torch", facts={"torch": {"version": "2", "mapped_libraries": libs}}),
            _probe("libraries.torch", facts={"files": [{"libraries": libs}]})]


def snapshot(size, side, shape="findings"):
    """A snapshot whose SHAPE part holds SIZE items; side 1 (b) shifts the items by SIZE/2, so
    half are shared and half appear on one side only (modules: the same, in reverse order)."""
    start = (size // 2) if side else 0
    items = range(start, start + size)
    probes, facts = [], {}
    if shape in ("findings", "mixed"):
        probes.append(_probe("libraries.ext", [_finding(i) for i in items]))
    if shape in ("probes", "mixed"):
        probes += [_probe("app.p%d" % i, [_finding(i)], status="fail" if i % 3 else "warn")
                   for i in items]
    if shape in ("stages", "mixed"):
        facts["stages"] = [{"name": "stage%d" % i, "duration_ms": 1.0 + i % 7} for i in items]
    if shape in ("modules", "mixed"):
        # modules: the same records on both sides, b's in reverse order (none at its place)
        names = range(size) if shape == "modules" else items
        mods = [{"module": "m%d" % i, "type": "Linear", "mean": 1.0, "std": 1.0, "max_abs": 1.0,
                 "nan": 0, "inf": 0, "shape": [4], "dtype": "float32"} for i in names]
        if shape == "modules" and side:
            mods.reverse()
        facts["numerics"] = {"name": "model", "input": {"shape": [4], "mean": 0.0},
                             "modules": mods}
    if shape in ("lists", "mixed"):
        facts["mapped_libraries"] = [{"name": "lib%d.so" % i, "root": "/opt/r%d" % (i % 2)}
                                     for i in items]
        facts["installs"] = [{"path": "/opt/i%d" % i, "version": "1"} for i in items]
        facts["devices"] = [{"pci_address": "0000:%02x:%02x.0" % (i // 256 % 256, i % 256),
                             "name": "gpu"} for i in items]
    if shape in ("keys", "mixed"):
        facts["versions"] = {"k%d_version" % i: "1.%d" % (i % 5) for i in items}
        facts["timing"] = {"t%d_ms" % i: 1.0 + i % 3 for i in items}
    if shape == "repeats":
        # a: one probe id repeated SIZE times; b: that probe once, with SIZE keys in its facts
        if side:
            probes.append(_probe("app.script", facts={
                "timing": {"t%d_ms" % i: 1.0 for i in range(size)},
                "versions": {"k%d_version" % i: "1" for i in range(size)}}))
        else:
            probes += [_probe("app.script", facts={"timing": {"t0_ms": 2.0}, "versions": {}})
                       for _ in range(size)]
    if shape == "platforms":
        probes += _platform_probes(items, side)
    if facts:
        probes.append(_probe("app.script", facts=facts))
    return {"schema": "stackcheck/snapshot/v1", "created": "2025-01-0%dT00:00:00Z" % (side + 1),
            "host": {"kernel": "6.1.0", "os": {"pretty_name": "Debian GNU/Linux 12"}},
            "layers": [{"name": "app", "status": "warn", "probes": probes}],
            "summary": {"status": "warn", "exit_code": 0, "first_failure": None}}


def write_diff_pair(out_dir, size, shape="findings"):
    """Writes out_dir/a.json and out_dir/b.json; returns their paths."""
    os.makedirs(out_dir, exist_ok=True)
    paths = []
    for side, name in ((0, "a.json"), (1, "b.json")):
        path = os.path.join(out_dir, name)
        with open(path, "w") as f:
            json.dump(snapshot(size, side, shape), f)
        paths.append(path)
    return paths


# ---- shared objects ----

def shared_object(out, needed_dir=None, needed=(), soname=None, rpath=None, asm=""):
    """A tiny shared object without libc (libtree's way). needed names are linked as files of
    needed_dir (which must hold them); rpath is written as DT_RPATH through a response file, so
    it may be longer than one command-line argument."""
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    src = out + ".c"
    with open(src, "w") as f:
        f.write("int sc_path_f(void) { return 0; }\n")
    sources = [src]
    if asm:
        sources.append(out + ".s")
        with open(sources[-1], "w") as f:
            f.write(asm)
    args = ["-shared", "-fPIC", "-nostdlib", "-o", out] + sources + [
        "-Wl,--no-as-needed", "-Wl,--disable-new-dtags"]
    if soname:
        args.append("-Wl,-soname," + soname)
    if needed:
        args += ["-L" + needed_dir] + ["-l:" + n for n in needed]
    if rpath:
        args.append("-Wl,-rpath," + ":".join(rpath))  # one option: ld dedupes many slowly
    rsp = out + ".rsp"
    with open(rsp, "w") as f:
        f.write("\n".join(args) + "\n")
    subprocess.run([CC, "@" + rsp], check=True, capture_output=True)
    os.remove(rsp)
    for path in sources:
        os.remove(path)
    return out


def _stubs(stub_dir, names):
    """One stub without a soname, under each name: linking against it records the name."""
    os.makedirs(stub_dir, exist_ok=True)
    first = shared_object(os.path.join(stub_dir, "stub.so"))
    for n in names:
        os.link(first, os.path.join(stub_dir, n))


def _short_name(i):
    """Distinct short directory names: a, b, ..., ba, bb, ... (so no entry is a duplicate)."""
    digits = "abcdefghijklmnopqrstuvwxyz0123456789"
    s = ""
    while True:
        s = digits[i % len(digits)] + s
        i //= len(digits)
        if i == 0:
            return "/" + s


def rpath_elf(out_dir, entries=50000, missing=100):
    """out_dir/libwide.so: an RPATH of `entries` distinct absent directories and `missing`
    DT_NEEDED libraries that exist nowhere."""
    names = ["libabsent%d.so" % i for i in range(missing)]
    stub_dir = tempfile.mkdtemp(prefix="sc-stub-")
    try:
        _stubs(stub_dir, names)
        out = os.path.join(out_dir, "libwide.so")
        shared_object(out, stub_dir, names, "libwide.so",
                      [_short_name(i) for i in range(entries)])
    finally:
        shutil.rmtree(stub_dir, ignore_errors=True)
    return out


def _patched(template, pairs):
    """A copy of template's bytes with each (old, new) byte string replaced (same lengths)."""
    data = template
    for old, new in pairs:
        assert len(old) == len(new) and old in data, old
        data = data.replace(old, new)
    return data


def rpath_chain(out_dir, depth=2000, shared=()):
    """A chain of `depth` libraries in out_dir/lib: libc<i>.so needs libc<i+1>.so; libc<i> has
    the RPATH /absent/d<i> of its own (after the `shared` directories, the same in each); only
    libc00000's RPATH also names their directory ($ORIGIN, so the chain also works inside a
    sysroot). Each lookup at depth d walks the RPATH of d libraries before the first library's:
    d^2 / 2 in all. Built from one template by replacing fixed-width numbers, so a deep chain
    costs no compiler runs."""
    lib = os.path.join(os.path.abspath(out_dir), "lib")
    os.makedirs(lib, exist_ok=True)
    stub_dir = tempfile.mkdtemp(prefix="sc-stub-")
    try:
        _stubs(stub_dir, ["libc99999.so"])
        tmpl_path = shared_object(os.path.join(stub_dir, "tmpl.so"), stub_dir, ["libc99999.so"],
                                  "libc88888.so", list(shared) + ["/absent/d88888"])
        with open(tmpl_path, "rb") as f:
            template = f.read()
    finally:
        shutil.rmtree(stub_dir, ignore_errors=True)
    for i in range(depth):
        me, nxt = b"%05d" % i, b"%05d" % (i + 1 if i + 1 < depth else 99999)
        data = _patched(template, [(b"libc88888", b"libc" + me), (b"libc99999", b"libc" + nxt),
                                   (b"/absent/d88888", b"/absent/d" + me)])
        with open(os.path.join(lib, "libc%05d.so" % i), "wb") as f:
            f.write(data)
    first = os.path.join(lib, "libc00000.so")
    os.remove(first)
    shared_object(first, lib, ["libc00001.so"], "libc00000.so",
                  list(shared) + ["/absent/d00000", "$ORIGIN"])
    return first


# ---- offload bundles ----

HIP_ID = b"hipv4-amdgcn-amd-amdhsa--gfx90a"


def _bundle(ids, code=64, pad=0):
    """An uncompressed clang offload bundle with these ids (each entry `code` bytes of code), then
    `pad` zero bytes."""
    table = 32 + sum(24 + len(i) for i in ids)
    out = bytearray(b"__CLANG_OFFLOAD_BUNDLE__" + struct.pack("<Q", len(ids)))
    for n, i in enumerate(ids):
        out += struct.pack("<QQQ", table + n * code, code, len(i)) + i
    return bytes(out) + b"\xab" * (code * len(ids)) + bytes(pad)


def _ccob_v3(method, raw, comp, declared=None):
    """A CCOB v3 bundle; declared is the uncompressed size its header states (default: true)."""
    size = len(raw) if declared is None else declared
    return b"CCOB" + struct.pack("<HHQQQ", 3, method, 32 + len(comp), size, 0) + comp


def _zstd(data):
    return subprocess.run(["zstd", "-q", "-c", "-19"], input=data, capture_output=True,
                          check=True).stdout


def bundle_section(count, kind="tiny-zstd"):
    """The bytes of a .hip_fatbin of `count` compressed bundles, each at the 8-byte boundary after
    the last (the packing the reader follows):
      tiny-zstd   a two-entry bundle, zstd, about 100 bytes each, declaring 1 MiB uncompressed;
      zlib-bomb   a one-entry bundle declared and inflating to 1 MiB (zeros after its table);
      zlib-table  a bundle whose entry table alone fills most of 1 MiB (18,000 entries)."""
    if kind == "tiny-zstd":
        raw = _bundle([b"host-x86_64-unknown-linux--", HIP_ID])
        one = _ccob_v3(1, raw, _zstd(raw), 1 << 20)
    elif kind == "zlib-bomb":
        raw = _bundle([HIP_ID], pad=(1 << 20))
        one = _ccob_v3(0, raw, zlib.compress(raw, 9))
    elif kind == "zlib-table":
        raw = _bundle([HIP_ID] * 18000, code=0)
        one = _ccob_v3(0, raw, zlib.compress(raw, 9))
    else:
        raise ValueError(kind)
    one += bytes(-len(one) % 8)
    return one * count


def bundles_elf(out, count, kind="tiny-zstd"):
    """A shared object whose .hip_fatbin section holds bundle_section(count, kind)."""
    blob = out + ".fatbin"
    with open(blob, "wb") as f:
        f.write(bundle_section(count, kind))
    try:
        shared_object(out, soname=os.path.basename(out),
                      asm='.section .hip_fatbin,"a",@progbits\n.p2align 12\n.incbin "%s"\n' % blob)
    finally:
        os.remove(blob)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    d = sub.add_parser("diff")
    d.add_argument("size", type=int)
    d.add_argument("out_dir")
    d.add_argument("--shape", choices=SHAPES, default="findings")
    r = sub.add_parser("rpath-elf")
    r.add_argument("out_dir")
    r.add_argument("--entries", type=int, default=50000)
    r.add_argument("--missing", type=int, default=100)
    c = sub.add_parser("rpath-chain")
    c.add_argument("out_dir")
    c.add_argument("--depth", type=int, default=2000)
    c.add_argument("--shared", type=int, default=0,
                   help="absent directories first in every library's RPATH")
    b = sub.add_parser("bundles")
    b.add_argument("out_file")
    b.add_argument("--count", type=int, default=100000)
    b.add_argument("--kind", choices=("tiny-zstd", "zlib-bomb", "zlib-table"), default="tiny-zstd")
    a = ap.parse_args()
    if a.what == "diff":
        print(" ".join(write_diff_pair(a.out_dir, a.size, a.shape)))
    elif a.what == "rpath-elf":
        print(rpath_elf(a.out_dir, a.entries, a.missing))
    elif a.what == "rpath-chain":
        print(rpath_chain(a.out_dir, a.depth, [_short_name(i) for i in range(a.shared)]))
    else:
        print(bundles_elf(a.out_file, a.count, a.kind))


if __name__ == "__main__":
    main()
