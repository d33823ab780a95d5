#!/usr/bin/env python3
"""Names that two source files of one target both define, in any namespace.

    python3 scripts/unity_names.py

CI compiles every target in unity batches (PEGASOS_UNITY, CMakeLists.txt): up to 8
.cpp files of a target become one translation unit. A helper in one file's anonymous
namespace then meets the other files' names. Two kinds of clash follow:
  - the same signature twice: a compile error;
  - another signature: the overloads merge, and a call can silently pick the other
    file's function. It happened: inspect_text.cpp's number(const json&, const char* =
    ...) met config.cpp's number(json, origin, key) and cross_validate.cpp's
    number(string), and a transfer test then got a JSON type error instead of its
    message.
So every function, type and constant defined at namespace scope must have a name of
its own within its target, whatever its namespace: config.cpp's anonymous fail() and
experiment_detail::fail() of the same signature were both found by spec.cpp's
calls (a using-directive) once a batch of 16 joined them. The batches change as files
are added, so the whole target is checked, not the current batches.

A heuristic, not a C++ parser: definitions are the lines that start at column 0 with
a declaration head (`type name(`, `struct name`, `class name`, `enum name`,
`using name =`, `constexpr ... name =`). A declaration without a body (`...);`)
is not a definition. Exit status 1 if a name is defined in two files, else 0.
"""
import collections
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

TARGET_RE = re.compile(r"add_(?:library|executable)\((\w+)(?:\s+STATIC)?\s+([^)]*)\)")
FUNCTION_RE = re.compile(
    r"^(?!return\b|if\b|for\b|while\b|else\b|case\b|namespace\b|template\b|using namespace\b)"
    r"(?:\[\[\w+\]\]\s*)?(?:[\w:<>,*&]+\s+)+[*&]*(\w+)\s*\(")
OTHER_RE = re.compile(
    r"^(?:struct|class|enum(?: class)?)\s+(\w+)\s*(?:[:{]|$)"
    r"|^using\s+(\w+)\s*="
    r"|^(?:constexpr|const|static|inline)[^=(]*\s(\w+)\s*(?:=|\[|\{)")


def targets():
    cmake = (ROOT / "CMakeLists.txt").read_text()
    found = {}
    for m in TARGET_RE.finditer(cmake):
        files = [f for f in m.group(2).split() if f.endswith(".cpp")]
        if files:
            found[m.group(1)] = files
    # The test sources are globbed (PEGASOS_TEST_SOURCES).
    found["pegasos_tests"] = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").glob("*.cpp"))
    return found


def definitions(path):
    """The name of each definition at namespace scope in the file."""
    lines = (ROOT / path).read_text().split("\n")
    for i, line in enumerate(lines):
        m = FUNCTION_RE.match(line)
        if m:
            # A declaration only (the head ends in ");" before any "{").
            head = line
            j = i
            while "{" not in head and ";" not in head and j + 1 < len(lines):
                j += 1
                head += lines[j]
            if "{" in head and (";" not in head or head.index("{") < head.index(";")):
                yield m.group(1)
            continue
        m = OTHER_RE.match(line)
        if m:
            yield next(g for g in m.groups() if g)


def main():
    clashes = 0
    for target, files in targets().items():
        where = collections.defaultdict(set)
        for f in files:
            if (ROOT / f).exists():
                for name in definitions(f):
                    where[name].add(f)
        for name, fs in sorted(where.items()):
            if len(fs) > 1 and name != "main":
                clashes += 1
                print(f"{target}: {name} defined in {', '.join(sorted(fs))}")
    if clashes:
        print(f"unity_names: {clashes} name(s) defined in more than one file of a target; "
              "rename the file-local ones (unity batches join the files)", file=sys.stderr)
    return 1 if clashes else 0


if __name__ == "__main__":
    sys.exit(main())
