# sc_python_locate's report of an interpreter about itself (src/python.c): version, prefixes,
# sysconfig build variables, and the package directories of its import path in import order (the
# standard library left out). Runs on Python 2.7 to 3.13. Nothing beyond os and sysconfig is
# imported: json, site and sysconfig.get_paths() would double the interpreter's start-up time.
import os
import sys
import sysconfig


def char(c):
    o = ord(c)
    if 32 <= o < 127 and c not in '"\\':
        return c
    if o > 0xFFFF:
        o -= 0x10000
        return "\\u%04x\\u%04x" % (0xD800 + (o >> 10), 0xDC00 + (o & 0x3FF))
    return "\\u%04x" % o


def q(x):
    if x is None:
        return "null"
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, (list, tuple)):
        return "[" + ", ".join(q(i) for i in x) + "]"
    return '"' + "".join(char(c) for c in str(x)) + '"'


def clean(p):
    """False for paths that JSON cannot carry (undecodable bytes kept as lone surrogates)."""
    try:
        p.encode("utf-8")
        return True
    except UnicodeError:
        return False


STDLIB = os.path.realpath(os.path.dirname(os.__file__))


def package_dir(p):
    if not p or not clean(p) or not os.path.isdir(p):
        return False
    r = os.path.realpath(p)
    return r != STDLIB and not r.endswith("lib-dynload")


def main():
    v = sysconfig.get_config_var
    dirs = []
    for p in sys.path:
        p = os.path.abspath(p) if p else p
        if package_dir(p) and p not in dirs:
            dirs.append(p)
    out = [("executable", sys.executable),
           ("version", "%d.%d.%d" % tuple(sys.version_info[:3])),
           ("prefix", sys.prefix), ("base_prefix", getattr(sys, "base_prefix", sys.prefix)),
           ("ldlibrary", v("LDLIBRARY")), ("libdir", v("LIBDIR")), ("instsoname", v("INSTSONAME")),
           ("ldversion", v("LDVERSION") or v("VERSION")),
           ("shared", bool(v("Py_ENABLE_SHARED"))), ("site_dirs", dirs)]
    body = ", ".join(q(k) + ": " + q(x) for k, x in out)
    sys.stdout.write("\nSC-PYINFO:{" + body + "}\n")


main()
