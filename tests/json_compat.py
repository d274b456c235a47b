"""json_compat.py: Stagger's JSON protocol against Debian's python3-thrift.

Values of every Thrift type (scalars at their limits, unicode, escapes,
empty and large containers, numbers and doubles as map keys, deep nesting)
are written by Python's TJSONProtocol and read by Stagger's (through the
thrift_transcode tool, which rewrites them in the binary protocol for Python
to read back), and the other way round. Where both libraries must write the
same bytes, the bytes are compared too. Hand-written JSON covers what Python
never writes (surrogate pairs, padded base64), and malformed JSON must be
refused cleanly.
"""
import math
import subprocess
import sys

from thrift.protocol import TBinaryProtocol, TJSONProtocol
from thrift.protocol.TProtocol import TType
from thrift.Thrift import TMessageType
from thrift.transport import TTransport

import stgtest

TTYPES = {
    "bool": TType.BOOL, "i8": TType.BYTE, "i16": TType.I16, "i32": TType.I32,
    "i64": TType.I64, "dbl": TType.DOUBLE, "str": TType.STRING, "bin": TType.STRING,
}


def ttype(spec):
    if isinstance(spec, str):
        return TTYPES[spec]
    return {"list": TType.LIST, "set": TType.SET, "map": TType.MAP,
            "struct": TType.STRUCT}[spec[0]]


def write(p, spec, v):
    if isinstance(spec, str):
        getattr(p, {"bool": "writeBool", "i8": "writeByte", "i16": "writeI16",
                    "i32": "writeI32", "i64": "writeI64", "dbl": "writeDouble",
                    "str": "writeString", "bin": "writeBinary"}[spec])(v)
    elif spec[0] in ("list", "set"):
        (p.writeListBegin if spec[0] == "list" else p.writeSetBegin)(ttype(spec[1]), len(v))
        for e in v:
            write(p, spec[1], e)
        (p.writeListEnd if spec[0] == "list" else p.writeSetEnd)()
    elif spec[0] == "map":
        p.writeMapBegin(ttype(spec[1]), ttype(spec[2]), len(v))
        for k, e in v:
            write(p, spec[1], k)
            write(p, spec[2], e)
        p.writeMapEnd()
    else:
        p.writeStructBegin("S")
        for fid, fspec in spec[1]:
            if fid in v:
                p.writeFieldBegin("f%d" % fid, ttype(fspec), fid)
                write(p, fspec, v[fid])
                p.writeFieldEnd()
        p.writeFieldStop()
        p.writeStructEnd()


def read(p, spec):
    if isinstance(spec, str):
        return getattr(p, {"bool": "readBool", "i8": "readByte", "i16": "readI16",
                           "i32": "readI32", "i64": "readI64", "dbl": "readDouble",
                           "str": "readString", "bin": "readBinary"}[spec])()
    if spec[0] in ("list", "set"):
        et, n = (p.readListBegin if spec[0] == "list" else p.readSetBegin)()
        assert et == ttype(spec[1]), "element type %d" % et
        out = [read(p, spec[1]) for _ in range(n)]
        (p.readListEnd if spec[0] == "list" else p.readSetEnd)()
        return out
    if spec[0] == "map":
        kt, vt, n = p.readMapBegin()
        assert (kt, vt) == (ttype(spec[1]), ttype(spec[2])), "map types %d %d" % (kt, vt)
        out = []
        for _ in range(n):
            k = read(p, spec[1])
            out.append((k, read(p, spec[2])))
        p.readMapEnd()
        return out
    fields = dict(spec[1])
    out = {}
    p.readStructBegin()
    while True:
        _, ft, fid = p.readFieldBegin()
        if ft == TType.STOP:
            break
        assert fid in fields and ft == ttype(fields[fid]), "field %d type %d" % (fid, ft)
        out[fid] = read(p, fields[fid])
        p.readFieldEnd()
    p.readStructEnd()
    return out


def same(a, b):
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b and type(a) == type(b)


def encode(factory, spec, value, seqid=7):
    buf = TTransport.TMemoryBuffer()
    p = factory(buf)
    p.writeMessageBegin("compat", TMessageType.CALL, seqid)
    write(p, spec, value)
    p.writeMessageEnd()
    return buf.getvalue()


def decode(factory, spec, data):
    p = factory(TTransport.TMemoryBuffer(data))
    name, mtype, seqid = p.readMessageBegin()
    assert (name, mtype, seqid) == ("compat", TMessageType.CALL, 7), (name, mtype, seqid)
    v = read(p, spec)
    p.readMessageEnd()
    return v


JSON = TJSONProtocol.TJSONProtocol
BIN = TBinaryProtocol.TBinaryProtocol


def transcode(mode, data, binary_strings=False):
    argv = [stgtest.program("tests/thrift_transcode"), mode]
    if binary_strings:
        argv.append("--binary-strings")
    r = subprocess.run(argv, input=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=120)
    return r.returncode, r.stdout, r.stderr.decode("utf-8", "replace")


def spec_struct(*fields):
    return ("struct", list(enumerate(fields, start=1)))


# ---- the cases ---------------------------------------------------------------

STRINGS = ["", "plain", 'quote " backslash \\ slash /', "\b\f\n\r\t", "h\u00e9llo w\u00f6rld",
           "\u65e5\u672c\u8a9e", "\U0001F600 and \U0001D11E", "\u007f\u0080\u07ff\u0800\uffff",
           "x" * 300]
DOUBLES = [0.0, -0.0, 1.5, 0.1, -2.5e-3, 1e300, -1e-300, 5e-324, 1.7976931348623157e308,
           float(2 ** 53 + 1), 123456789.123456789, 1e21, 1e-7]

SCALARS = spec_struct("bool", "bool", "i8", "i8", "i16", "i16", "i32", "i32", "i64", "i64",
                      ("list", "dbl"), ("list", "str"), "i32")
SCALAR_VALUES = {1: True, 2: False, 3: -128, 4: 127, 5: -32768, 6: 32767, 7: -2 ** 31,
                 8: 2 ** 31 - 1, 9: -2 ** 63, 10: 2 ** 63 - 1, 11: DOUBLES, 12: STRINGS, 13: 0}

KEYED = spec_struct(("map", "i8", "str"), ("map", "i16", "i32"), ("map", "i32", "bool"),
                    ("map", "i64", "dbl"), ("map", "dbl", "str"), ("map", "bool", "i64"),
                    ("map", "str", "i32"), ("map", "str", ("map", "i32", "str")))
KEYED_VALUES = {1: [(-1, "minus one"), (7, "seven")], 2: [(300, -300)],
                3: [(2 ** 31 - 1, True), (-5, False)], 4: [(-2 ** 63, 1.25)],
                5: [(1.5, "a"), (-0.25, "b"), (1e100, "c")], 6: [(True, 1), (False, 0)],
                7: [("\u00e9", 1), ("", 2), ('"k"', 3)],
                8: [("outer", [(1, "x"), (2, "y")]), ("empty", [])]}

INNER = spec_struct("i32", "str", ("list", "i64"))
CONTAINERS = spec_struct(("list", "i32"), ("list", "str"), ("set", "i64"), ("map", "str", "i32"),
                         ("list", ("list", "i32")), ("list", INNER), ("set", INNER),
                         ("map", "str", ("list", ("map", "i32", "str"))), INNER, INNER,
                         ("list", "bool"), ("set", "i8"), ("list", "i16"))
CONTAINER_VALUES = {1: [], 2: [], 3: [], 4: [], 5: [[], [1], [2, 3]],
                    6: [{1: 1, 2: "a", 3: [1, 2]}, {}, {3: []}],
                    7: [{1: 5}, {2: "set element"}],
                    8: [("k", [[(1, "v")], []])], 9: {}, 10: {1: -1, 2: "", 3: [2 ** 40]},
                    11: [True, False, True], 12: [-128, 0, 127], 13: [-1, 1]}


def nested_struct(depth):
    spec = spec_struct("i32")
    value = {1: depth}
    for d in range(depth):
        spec = spec_struct(spec, "i32")
        value = {1: value, 2: d}
    return spec, value


def nested_list(depth):
    spec, value = "i32", 42
    for _ in range(depth):
        spec, value = ("list", spec), [value, value] if isinstance(value, int) else [value]
    return spec_struct(spec), {1: value}


LARGE = spec_struct(("list", "i64"), "str", ("map", "str", "i32"), ("list", "dbl"))
LARGE_VALUES = {1: list(range(-50000, 50000, 3)), 2: "\u00e9\U0001F600ab" * 100000,
                3: [("key%06d" % i, i) for i in range(10000)],
                4: [i / 7.0 for i in range(5000)]}

BINARY = spec_struct(("list", "bin"), ("map", "bin", "bin"))
BINARY_VALUES = {1: [b"", b"\x00", b"\x00\xff", b"\x00\xff\x10", b"\xfb\xff\xbf\x00\x01",
                     bytes(range(256)), bytes(range(256)) * 100],
                 2: [(b"\x00key", b"\xffvalue")]}


def roundtrip(results, name, spec, value, exact=True, binary_strings=False):
    """Python JSON -> Stagger -> binary -> Python, and Python binary ->
    Stagger -> JSON -> Python; with @exact, Stagger's JSON must be the very
    bytes Python writes."""
    py_json = encode(JSON, spec, value)
    rc, out, err = transcode("json2bin", py_json, binary_strings)
    if results.check(name + ": Stagger reads Python's JSON", rc == 0, err):
        got = decode(BIN, spec, out)
        results.check(name + ": values survive JSON -> binary", same(got, value),
                      "%r != %r" % (got, value) if len(repr(got)) < 2000 else "differs")
    py_bin = encode(BIN, spec, value)
    rc, out, err = transcode("bin2json", py_bin, binary_strings)
    if results.check(name + ": Stagger writes JSON", rc == 0, err):
        got = decode(JSON, spec, out)
        results.check(name + ": Python reads Stagger's JSON", same(got, value),
                      "%r != %r" % (got, value) if len(repr(got)) < 2000 else "differs")
        if exact:
            results.check(name + ": same bytes as Python's TJSONProtocol", out == py_json,
                          "\n stagger: %r\n python:  %r" % (out[:300], py_json[:300]))


def special_doubles(results):
    """NaN and the infinities: Stagger writes them quoted, as C++ and Java
    do; Python reads them back."""
    spec = spec_struct(("list", "dbl"), ("map", "dbl", "i32"))
    value = {1: [float("nan"), float("inf"), float("-inf")], 2: [(float("inf"), 1)]}
    rc, out, err = transcode("bin2json", encode(BIN, spec, value))
    if results.check("special doubles: Stagger writes them", rc == 0, err):
        results.check("special doubles: quoted names",
                      b'"NaN","Infinity","-Infinity"' in out and b'{"Infinity":1}' in out, out)
        results.check("special doubles: Python reads them", same(decode(JSON, spec, out), value))


def control_characters(results):
    """Stagger escapes every control character (as C++ and Java do); Python
    writes most of them raw. Both read each other."""
    spec = spec_struct("str")
    value = {1: "a\x01b\x1fc\x7fd"}
    rc, out, err = transcode("bin2json", encode(BIN, spec, value))
    if results.check("control characters: Stagger writes them", rc == 0, err):
        results.check("control characters: escaped as \\u00XX", b"a\\u0001b\\u001fc" in out, out)
        results.check("control characters: Python reads them", same(decode(JSON, spec, out), value))
    roundtrip(results, "control characters", spec, value, exact=False)


def hand_written(results):
    """JSON that Python never writes but the other libraries may."""
    head = b'[1,"compat",1,7,'
    cases = [
        ("surrogate pair", b'{"1":{"str":"\\ud83d\\ude00"}}', spec_struct("str"), {1: "\U0001F600"}),
        ("\\u escapes", b'{"1":{"str":"\\u00e9\\u0041\\u65E5\\/"}}', spec_struct("str"),
         {1: "\u00e9A\u65e5/"}),
        ("field order and unknown ids", b'{"2":{"i32":5},"1":{"i32":4}}',
         spec_struct("i32", "i32"), {1: 4, 2: 5}),
        ("negative field id", b'{"-3":{"i32":5}}', ("struct", [(-3, "i32")]), {-3: 5}),
        ("exponent double", b'{"1":{"dbl":1E+2}}', spec_struct("dbl"), {1: 100.0}),
        ("quoted double key", b'{"1":{"map":["dbl","i32",1,{"2.5":1}]}}',
         spec_struct(("map", "dbl", "i32")), {1: [(2.5, 1)]}),
    ]
    for name, body, spec, value in cases:
        rc, out, err = transcode("json2bin", head + body + b"]")
        if results.check("hand-written " + name + ": read", rc == 0, err):
            results.check("hand-written " + name + ": value", same(decode(BIN, spec, out), value),
                          repr(decode(BIN, spec, out)))
    # Base64 with and without padding, as binaries.
    for text, want in [(b"AP8Q", b"\x00\xff\x10"), (b"AQ==", b"\x01"), (b"AQ", b"\x01"),
                       (b"AAE=", b"\x00\x01"), (b"AAE", b"\x00\x01"), (b"", b"")]:
        body = b'{"1":{"str":"' + text + b'"}}'
        rc, out, err = transcode("json2bin", head + body + b"]", binary_strings=True)
        if results.check("base64 %r: read" % text, rc == 0, err):
            got = decode(BIN, spec_struct("bin"), out)
            results.check("base64 %r: value" % text, got == {1: want}, repr(got))


def refused(results):
    """Malformed JSON is an error (exit 1), never a crash or a hang."""
    head = b'[1,"compat",1,7,'
    deep = b'{"1":{"rec":' * 70 + b"{}" + b"}}" * 70
    cases = [
        ("empty input", b""),
        ("not JSON", b"hello"),
        ("bad version", b'[2,"compat",1,7,{}]'),
        ("bad message type", b'[1,"compat",9,7,{}]'),
        ("seqid out of range", b'[1,"compat",1,4294967296,{}]'),
        ("truncated", head + b'{"1":{"str":"abc'),
        ("truncated number", head + b'{"1":{"i32":12'),
        ("lone high surrogate", head + b'{"1":{"str":"\\ud83d"}}]'),
        ("lone low surrogate", head + b'{"1":{"str":"\\ude00"}}]'),
        ("two high surrogates", head + b'{"1":{"str":"\\ud83d\\ud83d"}}]'),
        ("bad escape", head + b'{"1":{"str":"\\q"}}]'),
        ("bad hex", head + b'{"1":{"str":"\\u12g4"}}]'),
        ("invalid UTF-8", head + b'{"1":{"str":"\xff\xfe"}}]'),
        ("overlong UTF-8", head + b'{"1":{"str":"\xc0\xaf"}}]'),
        ("NUL in a string", head + b'{"1":{"str":"a\\u0000b"}}]'),
        ("unknown type name", head + b'{"1":{"xyz":1}}]'),
        ("i8 out of range", head + b'{"1":{"i8":128}}]'),
        ("i32 out of range", head + b'{"1":{"i32":2147483648}}]'),
        ("i64 out of range", head + b'{"1":{"i64":9223372036854775808}}]'),
        ("number too long", head + b'{"1":{"i64":' + b"1" * 100 + b"}}]"),
        ("float as integer", head + b'{"1":{"i32":1.5}}]'),
        ("unquoted field id", head + b'{1:{"i32":1}}]'),
        ("quoted double outside a key", head + b'{"1":{"dbl":"1.5"}}]'),
        ("inf spelled as Python does", head + b'{"1":{"dbl":inf}}]'),
        ("field id out of range", head + b'{"40000":{"i32":1}}]'),
        ("negative list size", head + b'{"1":{"lst":["i32",-1]}}]'),
        ("list larger than the message", head + b'{"1":{"lst":["i32",1000000,1]}}]'),
        ("map larger than the message", head + b'{"1":{"map":["str","i32",100000,{}]}}]'),
        ("list size beyond int32", head + b'{"1":{"lst":["i32",4294967296]}}]'),
        ("nesting deeper than 64", head + deep + b"}]"),
        ("whitespace between tokens", b'[1, "compat",1,7,{}]'),
    ]
    for name, data in cases:
        rc, _, err = transcode("json2bin", data)
        results.check("refused: " + name, rc == 1 and err.startswith("thrift_transcode: "),
                      "exit %d, %s" % (rc, err.strip()))


def main():
    results = stgtest.Results("json_compat")
    results.run("scalars", roundtrip, results, "scalars", SCALARS, SCALAR_VALUES)
    results.run("keyed", roundtrip, results, "numbers as map keys", KEYED, KEYED_VALUES)
    results.run("containers", roundtrip, results, "containers", CONTAINERS, CONTAINER_VALUES)
    spec, value = nested_struct(40)
    results.run("nested structs", roundtrip, results, "nested structs", spec, value)
    spec, value = nested_list(40)
    results.run("nested lists", roundtrip, results, "nested lists", spec, value)
    results.run("large", roundtrip, results, "large values", LARGE, LARGE_VALUES)
    results.run("binary", roundtrip, results, "binary", BINARY, BINARY_VALUES, False, True)
    results.run("special doubles", special_doubles, results)
    results.run("control characters", control_characters, results)
    results.run("hand-written", hand_written, results)
    results.run("refused", refused, results)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
