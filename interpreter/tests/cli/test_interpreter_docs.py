"""docs/interpreter/*.md (and the docs/interpreter.md pointer) checked against the code, so that an
example cannot go stale unseen (issue 49, item 4):

a. links and paths: every relative Markdown link resolves (from the file's folder) and its
   `#anchor`, when it points into a Markdown file, is a heading of that file (GitHub's anchor rule);
   every repository path in backticks (a single word with a `/` that ends in `/` or in a file
   extension, e.g. `interpreter/src/lower/stack_ir.cc`) exists from the repository root. Not
   checked: paths under build/ or results/ (build outputs, run directories), absolute, home or
   ../ paths (outside the repository) and paths with a placeholder (`<name>`, `*`, `{h,cc}`, ...);
   a backticked word with other characters (`"x/"`, `pkg@1.0/deps/x.tar.gz`) is not a path.
b. dlab command lines: every `dlab ...` in a fenced code block (with `\\` continuations, and a
   usage synopsis's indented `[--option ...]` lines) or starting a backticked span names
   subcommands that exist and shows only options the subcommand's `--help` lists (or an
   enclosing command's: CLI11 lets a parent's options follow a subcommand). `run|spec|bench` is
   each of them; quoted text (a peer's own command) and what follows a bare `--` (the program's
   arguments) are not dlab's options. A backticked `dlab` phrase with no option and no known
   subcommand is prose (an error message quoting dlab), not a command.
c. macro examples: every call of a row macro of the .def files (the `NAME(` that begins a line of
   any interpreter/**/*.def: NUM, BINOP, VEC, ENGINE, PLACEMENT, ...) in a code block or starting
   a backticked span has as many arguments as that macro's real rows (the preprocessor's rule:
   commas inside parentheses or string literals do not count). In a fenced C/def block every
   row-shaped line (`NAME(` at its start) must use a known row macro, and is a quote: a row of
   that macro with that name must exist, with the same text (whitespace aside).

Each check returns `path:line: what is wrong` messages; the tests at the end run them on made-up
Markdown, so each can be seen to fail."""
import functools
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
DOC_DIR = REPO / "docs" / "interpreter"


def interpreter_docs() -> list[Path]:
    return sorted(DOC_DIR.glob("*.md")) + [REPO / "docs" / "interpreter.md"]


def checked_docs() -> list[Path]:
    """The interpreter's pages and the README, whose walks and command lines name the same code."""
    return interpreter_docs() + [REPO / "README.md"]


def rel(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(REPO))
    except ValueError:
        return str(path)


# ---- Markdown structure -------------------------------------------------------------------------

FENCE = re.compile(r"^\s*(```+|~~~+)\s*([\w+-]*)")


@dataclass
class Fenced:
    lang: str
    first_line: int  # line number of the block's first content line
    lines: list[str] = field(default_factory=list)


def split_markdown(text: str) -> tuple[str, list[Fenced]]:
    """(the prose, fenced blocks blanked so line numbers stay, the fenced blocks)."""
    prose, blocks, current = [], [], None
    for number, line in enumerate(text.split("\n"), start=1):
        m = FENCE.match(line)
        if current is None and m:
            current = Fenced(m.group(2).lower(), number + 1)
            prose.append("")
        elif current is not None and m and not m.group(2) and line.strip().strip("`~") == "":
            blocks.append(current)
            current = None
            prose.append("")
        elif current is not None:
            current.lines.append(line)
            prose.append("")
        else:
            prose.append(line)
    if current is not None:
        blocks.append(current)
    return "\n".join(prose), blocks


CODE_SPAN = re.compile(r"(?<!`)`([^`]+?)`(?!`)", re.S)


def code_spans(prose: str) -> list[tuple[int, str]]:
    """(line, text) of each inline code span, its inner whitespace (line breaks) made single spaces."""
    out = []
    for m in CODE_SPAN.finditer(prose):
        if "\n\n" in m.group(1):
            continue
        out.append((prose.count("\n", 0, m.start()) + 1, " ".join(m.group(1).split())))
    return out


def github_anchor(heading: str) -> str:
    """GitHub's heading anchor: lower case, punctuation but '-' and '_' dropped, spaces to '-'."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors_of(text: str) -> set[str]:
    prose, _ = split_markdown(text)
    seen: dict[str, int] = {}
    out = set()
    for line in prose.split("\n"):
        m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        anchor = github_anchor(m.group(1))
        n = seen.get(anchor, 0)
        out.add(anchor if n == 0 else f"{anchor}-{n}")  # a repeated heading gets -1, -2, ...
        seen[anchor] = n + 1
    return out


# ---- a. links and repository paths ----------------------------------------------------------------

LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]+)\)")
PATH_CHARS = re.compile(r"[A-Za-z0-9_.][A-Za-z0-9_.+/-]*")


def path_candidate(span: str) -> bool:
    """A backticked word that reads as a repository path: a '/' and a trailing '/' or extension."""
    if not PATH_CHARS.fullmatch(span) or "/" not in span or "..." in span:
        return False
    if span.startswith(("../", "./..")):
        return False
    last = span.rstrip("/").rsplit("/", 1)[-1]
    return span.endswith("/") or re.search(r"\.[A-Za-z][A-Za-z0-9_]*$", last) is not None


def check_links_and_paths(doc: Path, text: str, repo: Path = REPO) -> list[str]:
    prose, _ = split_markdown(text)
    problems = []
    # links, with code spans blanked (a link's text may hold one; a span's text is no link)
    blanked = CODE_SPAN.sub(lambda m: "`" + re.sub(r"[^\n]", " ", m.group(1)) + "`", prose)
    for m in LINK.finditer(blanked):
        line = blanked.count("\n", 0, m.start()) + 1
        target = m.group(2)
        if re.match(r"[a-z]+:", target):
            continue  # http:, https:, mailto:
        file_part, _, anchor = target.partition("#")
        where = f"{rel(doc)}:{line}"
        if not file_part:  # an anchor of this file
            if anchor not in anchors_of(text):
                problems.append(f"{where}: link {target}: no heading of {rel(doc)} has the anchor #{anchor}")
            continue
        dest = (doc.parent / file_part).resolve()
        if not dest.exists():
            problems.append(f"{where}: link target {target} does not exist ({rel(dest)})")
            continue
        if anchor and dest.suffix == ".md":
            if anchor not in anchors_of(dest.read_text()):
                problems.append(f"{where}: link {target}: no heading of {rel(dest)} has the anchor #{anchor}")
    spans = code_spans(prose)
    # A table row or line that names a folder first (the README's layout: `harness/` ... `cli/`)
    # may name what is in it relative to it.
    folders: dict[int, list[Path]] = {}
    for line, span in spans:
        if span.endswith("/") and (repo / span).is_dir():
            folders.setdefault(line, []).append(repo / span)
    for line, span in spans:
        if not path_candidate(span) or span.startswith(("build/", "results/")):
            continue
        if not any((base / span).exists() for base in [repo] + folders.get(line, [])[:1]):
            problems.append(f"{rel(doc)}:{line}: `{span}` is not a path in the repository")
    return problems


# ---- b. dlab command lines ------------------------------------------------------------------------


@dataclass
class Help:
    subcommands: set[str]
    options: set[str]


def parse_help(text: str) -> Help:
    subs, opts, section = set(), set(), ""
    for line in text.split("\n"):
        if re.match(r"\S.*:\s*$", line):
            section = line.strip()
            continue
        if section.startswith("Subcommands"):
            m = re.match(r"\s+([a-z][\w-]*)", line)
            if m:
                subs.add(m.group(1))
        m = re.match(r"\s+(-\S+)", line)
        if m and section.startswith("Options"):
            opts.update(o for o in m.group(1).split(",") if o.startswith("--"))
    return Help(subs, opts)


def dlab_help(dlab: Path):
    @functools.lru_cache(maxsize=None)
    def help_of(path: tuple[str, ...]) -> Help | None:
        out = subprocess.run([str(dlab), *path, "--help"], capture_output=True, text=True, timeout=60)
        return parse_help(out.stdout) if out.returncode == 0 else None
    return help_of


def strip_comment(line: str) -> str:
    """A shell comment (# after a blank, outside quotes) taken off."""
    quote = None
    for i, c in enumerate(line):
        if quote:
            quote = None if c == quote else quote
        elif c in "\"'":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i]
    return line


def dlab_commands(text: str) -> list[tuple[int, str]]:
    """(line, command) of every dlab command line: fenced (continuations joined) or a backticked span."""
    prose, blocks = split_markdown(text)
    out = [(line, span) for line, span in code_spans(prose) if re.match(r"dlab(\s|$)", span)]
    for block in blocks:
        lines = [strip_comment(l) for l in block.lines]
        i = 0
        while i < len(lines):
            m = re.match(r"\s*(?:\$\s+)?(dlab\s.*)", lines[i])
            if not m:
                i += 1
                continue
            start, command = block.first_line + i, m.group(1)
            i += 1
            while i < len(lines) and (command.rstrip().endswith("\\") or re.match(r"\s+[\[-]", lines[i])):
                command = command.rstrip().rstrip("\\") + " " + lines[i].strip()
                i += 1
            out.append((start, command))
    return out


def check_command(command: str, help_of) -> list[str]:
    """What is wrong with one dlab command line, given help_of(subcommand path) -> Help or None."""
    unquoted = re.sub(r"\"[^\"]*\"|'[^']*'", '""', command)
    tokens = unquoted.split()[1:]
    root = help_of(())
    if root is None:
        return ["`dlab --help` failed"]
    paths = [()]
    consumed = 0
    for token in tokens:
        helps = [help_of(p) for p in paths]
        if not all(h and h.subcommands for h in helps) or not re.fullmatch(r"[a-z][\w|-]*", token):
            break
        names = token.split("|")
        unknown = [n for n in names for h in helps if n not in h.subcommands]
        if unknown:
            looks_like_command = consumed > 0 or re.search(r"(^|\s)--?[A-Za-z]", unquoted)
            if not looks_like_command:
                return []  # prose quoting dlab ("dlab not found at ..."), not a command
            known = sorted(helps[0].subcommands)
            return [f"`dlab {' '.join(tokens[:consumed + 1])}`: no subcommand {unknown[0]} "
                    f"(dlab {' '.join(paths[0])} has {', '.join(known)})".replace("dlab  ", "dlab ")]
        paths = [p + (n,) for p in paths for n in names]
        consumed += 1
    rest = tokens[consumed:]
    if "--" in rest:
        rest = rest[:rest.index("--")]  # the program's arguments follow a bare --
    problems = []
    for option in dict.fromkeys(re.findall(r"(?<![\w-])--[A-Za-z][\w-]*", " ".join(rest))):
        for path in paths:
            known = set()
            for depth in range(len(path) + 1):  # the command's options and its parents'
                h = help_of(path[:depth])
                known |= h.options if h else set()
            if option not in known:
                problems.append(f"`dlab {' '.join(path)}` has no option {option} (not in its --help)")
    return problems


def check_dlab_commands(doc: Path, text: str, help_of) -> list[str]:
    return [f"{rel(doc)}:{line}: {p}" for line, command in dlab_commands(text)
            for p in check_command(command, help_of)]


# ---- c. macro examples against the .def files -----------------------------------------------------

CHAR_LITERAL = re.compile(r"'(\\.|[^'\\\n])'")


def call_arguments(text: str, open_paren: int) -> tuple[list[str], int] | None:
    """The top-level arguments of the call whose '(' is at open_paren, and the index after its ')'."""
    depth, args, start, i = 0, [], open_paren + 1, open_paren
    while i < len(text):
        c = text[i]
        if c == '"':
            i += 1
            while i < len(text) and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif c == "'" and CHAR_LITERAL.match(text, i):
            i = CHAR_LITERAL.match(text, i).end() - 1
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                args.append(text[start:i])
                if len(args) == 1 and not args[0].strip():
                    args = []
                return [a.strip() for a in args], i + 1
        elif c == "," and depth == 1:
            args.append(text[start:i])
            start = i + 1
        i += 1
    return None


@dataclass
class Row:
    where: str  # file:line
    args: list[str]
    text: str


def def_rows(repo: Path = REPO) -> dict[str, list[Row]]:
    """Every row macro call of interpreter/**/*.def: a NAME( beginning a line, to its ')'."""
    rows: dict[str, list[Row]] = {}
    for path in sorted((repo / "interpreter").rglob("*.def")):
        text = path.read_text()
        for m in re.finditer(r"^([A-Z][A-Z0-9_]*)\(", text, re.M):
            parsed = call_arguments(text, m.end() - 1)
            if parsed is None:
                continue
            args, end = parsed
            rows.setdefault(m.group(1), []).append(
                Row(f"{rel(path)}:{text.count(chr(10), 0, m.start()) + 1}", args, text[m.start():end]))
    return rows


def normalise(code: str) -> str:
    return re.sub(r"\s+", " ", code).strip()


def macro_calls(text: str, names: set[str]) -> list[tuple[int, str, list[str], str, bool]]:
    """(line, macro, arguments, call text, is a row-shaped line of a fenced C/def block) of every
    call of a known row macro in a code block or at the start of a backticked span; in a fenced
    C/def block also every line that begins with NAME( whatever NAME is."""
    prose, blocks = split_markdown(text)
    out = []
    for line, span in code_spans(prose):
        m = re.match(r"([A-Z][A-Z0-9_]*)\(", span)
        if m and m.group(1) in names:
            parsed = call_arguments(span, m.end() - 1)
            if parsed:
                out.append((line, m.group(1), parsed[0], span[:parsed[1]], False))
    for block in blocks:
        body = "\n".join(block.lines)
        quoting = block.lang in ("", "c", "cpp", "c++", "def")
        for m in re.finditer(r"\b([A-Z][A-Z0-9_]*)\(", body):
            row_shaped = quoting and (m.start() == 0 or body[m.start() - 1] == "\n")
            if m.group(1) not in names and not row_shaped:
                continue
            parsed = call_arguments(body, m.end() - 1)
            if parsed:
                out.append((block.first_line + body.count("\n", 0, m.start()), m.group(1), parsed[0],
                            body[m.start():parsed[1]], row_shaped))
    return out


def check_macro_examples(doc: Path, text: str, rows: dict[str, list[Row]]) -> list[str]:
    problems = []
    for line, name, args, call, row_shaped in macro_calls(text, set(rows)):
        where = f"{rel(doc)}:{line}"
        if name not in rows:
            problems.append(f"{where}: {name}(...) is no row macro of the .def files "
                            f"(they are {', '.join(sorted(rows))})")
            continue
        arities = sorted({len(r.args) for r in rows[name]})
        if len(args) not in arities:
            problems.append(f"{where}: {name}(...) has {len(args)} arguments; the rows of {name} have "
                            f"{' or '.join(map(str, arities))} ({rows[name][0].where})")
            continue
        if row_shaped:
            same_name = [r for r in rows[name] if r.args and args and r.args[0] == args[0]]
            if not same_name:
                problems.append(f"{where}: no {name} row is named {args[0]} (the .def files' rows are "
                                f"the examples: quote one)")
            elif all(normalise(r.text) != normalise(call) for r in same_name):
                problems.append(f"{where}: {name}({args[0]}, ...) differs from the row at "
                                f"{same_name[0].where}: {same_name[0].text}")
    return problems


# ---- the docs --------------------------------------------------------------------------------------


def test_the_docs_exist_and_the_old_file_points_to_them():
    docs = interpreter_docs()
    assert len(docs) >= 10, docs
    assert "interpreter/README.md" in (REPO / "docs" / "interpreter.md").read_text()


def test_links_and_repository_paths_exist():
    problems = [p for doc in checked_docs() for p in check_links_and_paths(doc, doc.read_text())]
    assert not problems, "\n".join(problems)


def test_dlab_command_lines_use_real_subcommands_and_options(dlab_bin):
    help_of = dlab_help(dlab_bin)
    commands = [c for doc in checked_docs() for c in dlab_commands(doc.read_text())]
    assert len(commands) > 40, commands  # the extraction found the docs' commands
    problems = [p for doc in checked_docs() for p in check_dlab_commands(doc, doc.read_text(), help_of)]
    assert not problems, "\n".join(problems)


def test_macro_examples_match_the_def_files():
    rows = def_rows()
    for name in ("NUM", "BINOP", "CMPOP", "LOADOP", "MEM", "VEC", "OP", "TOS", "SUPER", "SUPER_R",
                 "INSTR", "DISPATCH", "PLACEMENT", "BUDGET", "BOUNDS", "ENGINE", "TECHNIQUE", "WORKLOAD"):
        assert name in rows, f"no {name} rows read from the .def files: {sorted(rows)}"
    assert len(rows["ENGINE"]) > 20 and len(rows["NUM"]) > 50
    calls = [c for doc in checked_docs() for c in macro_calls(doc.read_text(), set(rows))]
    assert len(calls) >= 5, calls
    problems = [p for doc in checked_docs() for p in check_macro_examples(doc, doc.read_text(), rows)]
    assert not problems, "\n".join(problems)


# ---- the checkers, on made-up Markdown: each reports what it should --------------------------------


def test_github_anchors():
    assert github_anchor("The register IR (`--ir register`)") == "the-register-ir---ir-register"
    assert github_anchor("The memory's base in a register (`tail_pn`)") == "the-memorys-base-in-a-register-tail_pn"
    assert anchors_of("# A\n## A\n```\n# not a heading\n```\n") == {"a", "a-1"}


def test_a_broken_link_a_wrong_anchor_and_a_missing_path_are_reported(tmp_path):
    (tmp_path / "other.md").write_text("# Other\n\n## A section\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "real.cc").write_text("")
    doc = tmp_path / "doc.md"
    text = ("# Doc\n\n[fine](other.md#a-section) and [fine too](#doc), `src/real.cc`, `src/`,\n"
            "[gone](missing.md), [wrong anchor](other.md#no-such-section),\n"
            "[here](#nowhere) and `src/gone.cc`; not paths: `1/12.7`, `\"x/\"`, `build/x.csv`,\n"
            "`src/<name>.cc`, `wasi*.cc`\n\n```\n`src/in_a_block.cc` [block](nowhere.md)\n```\n")
    problems = check_links_and_paths(doc, text, repo=tmp_path)
    assert len(problems) == 4, problems
    assert problems[0].endswith("doc.md:4: link target missing.md does not exist (" + str(tmp_path / "missing.md") + ")")
    assert "doc.md:4: link other.md#no-such-section: no heading of" in problems[1]
    assert "doc.md:5: link #nowhere: no heading of" in problems[2]
    assert problems[3].endswith("doc.md:5: `src/gone.cc` is not a path in the repository")


FAKE_HELP = {
    (): Help({"wasm", "probes"}, {"--help"}),
    ("wasm",): Help({"run", "spec", "bench"}, {"--help"}),
    ("wasm", "run"): Help(set(), {"--help", "--dispatch", "--placement", "--invoke"}),
    ("wasm", "spec"): Help(set(), {"--help", "--dispatch", "--placement"}),
    ("wasm", "bench"): Help(set(), {"--help", "--placements", "--placement", "--dispatch", "--peer"}),
    ("probes",): Help({"fit"}, {"--help", "--targets"}),
    ("probes", "fit"): Help(set(), {"--help", "--engines"}),
}


def test_an_unknown_option_or_subcommand_is_reported():
    help_of = FAKE_HELP.get
    doc = Path("doc.md")
    text = ("Run `dlab wasm run --dispatch tail --variant vec m.wasm -- --not-dlabs` or\n"
            "`dlab wasm run|spec|bench --placement(s)`; `dlab not found at ...: run just build`.\n\n"
            "```sh\n"
            "dlab wasm bench --placements sp \\\n"
            "    --variants vec   # --ignored-in-a-comment\n"
            "dlab wasm run m.wasm [--dispatch tail]\n"
            "              [--bogus N]\n"
            "dlab probes fit --engines all --targets x86_64-linux-gnu\n"
            "dlab wasm bench --peer \"node=node --no-warnings run.mjs\"\n"
            "dlab wasm frobnicate --dispatch tail\n"
            "just rfc --not-checked\n"
            "```\n")
    problems = check_dlab_commands(doc, text, help_of)
    assert problems == [
        "doc.md:1: `dlab wasm run` has no option --variant (not in its --help)",
        "doc.md:5: `dlab wasm bench` has no option --variants (not in its --help)",
        "doc.md:7: `dlab wasm run` has no option --bogus (not in its --help)",
        "doc.md:11: `dlab wasm frobnicate`: no subcommand frobnicate (dlab wasm has bench, run, spec)",
    ], problems


def test_parse_help_reads_cli11_output():
    h = parse_help("Usage: dlab wasm bench [OPTIONS]\n\nOptions:\n  -h,--help   Print\n"
                   "  --placements,--placement TEXT=sp Excludes: --no-save\n      comma-separated --not-an-option\n"
                   "\nSubcommands:\n  fit    which arguments\n")
    assert h.options == {"--help", "--placements", "--placement"} and h.subcommands == {"fit"}


def test_a_wrong_macro_arity_an_unknown_macro_and_a_stale_row_are_reported(tmp_path):
    d = tmp_path / "interpreter" / "src"
    d.mkdir(parents=True)
    (d / "a.def").write_text(
        'BINOP(i32_add, 0x6A, "ii:i", uint32_t, uint32_t, a + b)\n'
        'NUM(i32_clz, 0x67, "i:i", UN(uint32_t, uint32_t, std::countl_zero(a)))\n'
        "ENGINE(tail, kTail, kSp, kNone, kCheck, DEFAULT)\n"
        "  NOT_A_ROW(x)\n")
    rows = def_rows(tmp_path)
    assert sorted(rows) == ["BINOP", "ENGINE", "NUM"]
    assert [len(r.args) for r in rows["NUM"]] == [4] and [len(r.args) for r in rows["BINOP"]] == [6]
    doc = Path("doc.md")
    text = ("Rows are `ENGINE(name, mode, placement, budget, bounds)` and `ENGINE(name, d, p, b, k, BUILD)`.\n\n"
            "```\n"
            'NUM(i32_add, 0x6A, "ii:i", BIN(uint32_t, uint32_t, a + b))\n'
            'BINOP(i32_add, 0x6A, "ii:i", uint32_t, a + b)\n'
            'NUM(i32_clz,  0x67, "i:i", UN(uint32_t, uint32_t, std::countl_zero(a)))\n'
            'NUM(i32_clz, 0x67, "i:i", UN(uint32_t, uint32_t, std::countr_zero(a)))\n'
            'NUMERIC(i32_sub, 0x6B, "ii:i", x)\n'
            "```\n")
    problems = check_macro_examples(doc, text, rows)
    assert len(problems) == 5, problems
    assert problems[0].startswith("doc.md:1: ENGINE(...) has 5 arguments; the rows of ENGINE have 6")
    assert problems[1].startswith("doc.md:4: no NUM row is named i32_add")
    assert problems[2].startswith("doc.md:5: BINOP(...) has 5 arguments; the rows of BINOP have 6")
    assert problems[3].startswith("doc.md:7: NUM(i32_clz, ...) differs from the row at")
    assert problems[4].startswith("doc.md:8: NUMERIC(...) is no row macro of the .def files")
