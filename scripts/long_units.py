#!/usr/bin/env python3
"""Long units: functions over 80 lines and files over 600 lines in the product folders.

    python3 scripts/long_units.py [ALLOWED ...]

Scans core/, objectives/, kernel/, io/, drivers/, text/ and python/ (and their sub-folders) for *.cpp and
*.hpp files and prints, one per line,

    core/engine.hpp:212: function train: 231 lines
    drivers/experiment.cpp: file: 1526 lines

Each ALLOWED entry is a file (every unit of it is allowed, the file's own length
included) or FILE:FUNCTION (that function only; FUNCTION is the name as printed).
Allowed units are printed with "(allowed)". Exit status: 1 if a unit outside the
allow-list is over its limit, else 0.

How functions are found (a heuristic, not a C++ parser): comments, string and
character literals (raw strings too) and preprocessor lines are blanked; then every
`{` at namespace or class scope is classified by the text before it (since the last
`;`, `{` or `}` of that scope): a namespace, class, struct, union or enum head opens
a scope that is scanned the same way; a head with a parenthesised parameter list,
or a lambda assigned to a variable, opens a function body, which ends at the
matching `}`. Everything inside a body (nested blocks, lambdas, local classes)
counts toward that function. Other braces at scope level (initialisers such as
`= {...}`, `x_{0}` in a constructor's initialiser list, default arguments such as
`f(g = {})`) are kept as part of the head. A function's length runs from the first line of its head (the template line
included, comments and preprocessor lines excluded) to its closing brace.
"""
import re
import sys
from pathlib import Path

FOLDERS = ["core", "objectives", "kernel", "io", "drivers", "text", "python"]
MAX_FUNCTION = 80
MAX_FILE = 600


def blank(text):
    """Comments, literals and preprocessor lines replaced by spaces (newlines kept)."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#":
            # A preprocessor line, with its backslash continuations.
            j = i
            while j < n and not (text[j] == "\n" and text[j - 1] != "\\"):
                j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
            continue
        if c == "\n":
            line_start = True
            out.append(c)
            i += 1
            continue
        if not c.isspace():
            line_start = False
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "R" and text.startswith('"', i + 1) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^()\\ ]{0,16})\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = text.find(")" + m.group(1) + '"', i + m.end())
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            # 1'000 digit separators: a quote after a digit that is not a char literal.
            if c == "'" and i > 0 and text[i - 1].isalnum() and not re.match(r"'(\\.|[^\\'])'", text[i:]):
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * (j - i - 2) + c if j - i >= 2 else " " * (j - i))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


SCOPE_RE = re.compile(r"^(template\s*<.*>\s*)?(inline\s+)?(namespace|class|struct|union|enum|extern\s+\"\s*\")\b", re.S)
ACCESS_RE = re.compile(r"^\s*(public|private|protected)\s*:(?!:)")
LAMBDA_RE = re.compile(r"=\s*(\[[^\]]*\])\s*(\(|\{|mutable|->)")


def depth0_paren(head):
    """Index of the first "(" outside braces and brackets, or -1."""
    depth = 0
    for k, ch in enumerate(head):
        if ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
        elif ch == "(" and depth == 0:
            return k
    return -1


def matching_paren(head, p):
    """Index of the ')' closing the '(' at p, or -1."""
    depth = 0
    for k in range(p, len(head)):
        if head[k] == "(":
            depth += 1
        elif head[k] == ")":
            depth -= 1
            if depth == 0:
                return k
    return -1


def classify(head):
    """'scope', 'function' or 'other' for the text before a '{' at scope level."""
    h = ACCESS_RE.sub("", head).strip()
    if SCOPE_RE.match(h) and (depth0_paren(h) < 0 or h.startswith("extern")):
        return "scope"
    if LAMBDA_RE.search(h):
        return "function"
    p = depth0_paren(h)
    if p < 0:
        return "other"
    before = h[:p]
    if re.search(r"(?<![=!<>])=(?!=)", before) and "operator" not in before:
        return "other"  # T x = f(...) {...} is an initialiser
    if re.search(r"\b(requires|concept)\b", before):
        return "other"
    # A braced member initialiser in a constructor's initialiser list
    # (S(int x) : x_{x}, ...): after the parameter list comes ':' and the brace
    # follows a member name; the body's brace comes after a ')' or '}'.
    close = matching_paren(h, p)
    if close > 0 and re.match(r"\s*(noexcept\b[^:]*)?:(?!:)", h[close + 1 :]) and re.search(r"[\w>]\s*$", h):
        return "other"
    return "function"


def function_name(head):
    h = ACCESS_RE.sub("", head).strip()
    m = LAMBDA_RE.search(h)
    if m:
        names = re.findall(r"[A-Za-z_]\w*", h[: m.start()])
        return (names[-1] if names else "lambda") + " (lambda)"
    p = depth0_paren(h)
    before = h[:p].rstrip()
    m = re.search(r"(operator\s*\S+|~?[A-Za-z_]\w*)$", before)
    name = m.group(1) if m else "?"
    q = re.search(r"((?:[A-Za-z_]\w*(?:<[^<>]*>)?::)+)" + re.escape(name) + r"$", before)
    return (q.group(1) + name) if q else name


def scan(text):
    """[(start_line, end_line, name)] of the function bodies in `text`."""
    b = blank(text)
    line_of = []
    line = 1
    for ch in b:
        line_of.append(line)
        if ch == "\n":
            line += 1
    units = []

    def scope(i, closing):
        """Scans a namespace/class scope from i; returns the index after its '}'."""
        head_start = i
        parens = 0  # braces inside a parameter list (f(std::function<...> g = {})) belong to the head
        n = len(b)
        while i < n:
            ch = b[i]
            if ch == "(":
                parens += 1
            elif ch == ")":
                parens = max(parens - 1, 0)
            elif ch == "{" and parens > 0:
                i = match(i)
                continue
            elif ch == ";":
                head_start = i + 1
            elif ch == "}":
                if closing:
                    return i + 1
                head_start = i + 1  # stray brace at file level
            elif ch == "{":
                head = b[head_start:i]
                kind = classify(head)
                parens = 0
                if kind == "scope":
                    i = scope(i + 1, True)
                    head_start = i
                    continue
                end = match(i)
                if kind == "function":
                    first = head_start + (len(head) - len(ACCESS_RE.sub("", head).lstrip()))
                    units.append((line_of[min(first, n - 1)], line_of[min(end - 1, n - 1)], function_name(head)))
                    i = end
                    head_start = i
                    continue
                i = end  # an initialiser: part of the head
                continue
            i += 1
        return i

    def match(i):
        depth = 0
        n = len(b)
        while i < n:
            if b[i] == "{":
                depth += 1
            elif b[i] == "}":
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        return n

    scope(0, False)
    return units


def main(argv):
    root = Path(__file__).resolve().parent.parent
    allowed = set(argv)
    found = []  # (path, line, what, length)
    for folder in FOLDERS:
        for path in sorted((root / folder).rglob("*")):
            if path.suffix not in (".cpp", ".hpp", ".h", ".cc") or not path.is_file():
                continue
            rel = path.relative_to(root).as_posix()
            text = path.read_text(encoding="utf-8", errors="replace")
            lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
            if lines > MAX_FILE:
                found.append((rel, None, "file", lines))
            for start, end, name in scan(text):
                if end - start + 1 > MAX_FUNCTION:
                    found.append((rel, start, name, end - start + 1))
    failed = False
    for rel, line, name, length in found:
        if line is None:
            ok = rel in allowed
            text = f"{rel}: file: {length} lines (limit {MAX_FILE})"
        else:
            ok = rel in allowed or f"{rel}:{name}" in allowed
            text = f"{rel}:{line}: function {name}: {length} lines (limit {MAX_FUNCTION})"
        failed = failed or not ok
        print(text + (" (allowed)" if ok else ""))
    unused = [a for a in allowed if not any(a in (r, f"{r}:{n}") for r, _, n, _ in found)]
    for a in sorted(unused):
        print(f"note: allowed '{a}' is within the limits (or does not exist)", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
