"""`dlab knee --csv`: its input parsed strictly, errors with file and line; a byte-order mark before
the header and unprintable bytes in what a message quotes handled (escaped, never shown raw); the
same knee found at any scale of double; 20,000 rows in linear time. Nothing here depends on this
CPU, its counters or its speed."""
import re

import pytest

from dlab_cli import assert_one_error, run_dlab, step_csv


def between(summary: str) -> str:
    m = re.search(r"steps up between (\S+) and (\S+) ", summary)
    assert m, summary
    return f"{float(m.group(1)):.6g}..{float(m.group(2)):.6g}"


@pytest.mark.parametrize("content,text", [
    ("x,y\n1,2\n2,nan\n3,4\n", ":3: column 'y': nan is not a finite value"),
    ("x,y\n1,2\n2,inf\n3,4\n", "is not a finite value"),
    ("x,y\n1,2\n2,10.0abc\n3,4\n", ":3: column 'y': '10.0abc' is not a number"),
    ("x,y\n1,2\n2\n3,4\n", ":3: 1 fields, the header has 2"),
    ("x,y\nabc,2\n", ":2: column 'x': 'abc' is not a number"),
    ("x,y\n1,2\n", "a knee needs at least 3"),
    ("a,b\n1,2\n", "no column 'x' (columns: a, b)"),
])
def test_knee_input_is_parsed_strictly_with_file_and_line(dlab_bin, tmp_path, content, text):
    f = tmp_path / "k.csv"
    f.write_text(content)
    out = run_dlab(dlab_bin, ["knee", "--csv", str(f)])
    assert out.returncode == 1, out.stdout
    assert text in out.stderr, out.stderr


def test_knee_on_20000_rows_finishes(dlab_bin, tmp_path):
    rows = ["x,y"] + [f"{i % 2000},{1.0 if i % 2000 < 600 else 3.0}" for i in range(20000)]
    f = tmp_path / "k.csv"
    f.write_text("\n".join(rows) + "\n")
    out = run_dlab(dlab_bin, ["knee", "--csv", str(f)])
    assert out.returncode == 0, out.stderr
    assert "steps up" in out.stdout


# ---- knee data near the limits of double -----------------------------------------------------

@pytest.mark.parametrize("scale", [1e150, 1e160, 1e300, 1e-170, 1e-300])
def test_knee_finds_the_same_knee_at_any_scale(dlab_bin, tmp_path, scale):
    base = run_dlab(dlab_bin, ["knee", "--csv", str(step_csv(tmp_path / "base.csv"))])
    assert base.returncode == 0, base.stderr
    scaled = run_dlab(dlab_bin, ["knee", "--csv", str(step_csv(tmp_path / "scaled.csv", y_scale=scale))])
    assert scaled.returncode == 0, scaled.stderr
    assert "flat" not in scaled.stdout and "(0 bootstrap" not in scaled.stdout, scaled.stdout
    assert between(scaled.stdout) == between(base.stdout), (base.stdout, scaled.stdout)
    both = run_dlab(dlab_bin, ["knee", "--csv", str(step_csv(tmp_path / "both.csv", y_scale=scale, x_scale=scale))])
    assert both.returncode == 0, both.stderr
    lo, hi = (float(v) / scale for v in between(both.stdout).split(".."))
    assert f"{lo:.6g}..{hi:.6g}" == between(base.stdout), (base.stdout, both.stdout)


# ---- a byte-order mark, and input quoted with what does not show escaped ---------------------

def test_a_bom_before_the_header_is_not_part_of_the_first_column(dlab_bin, tmp_path):
    csv = step_csv(tmp_path / "bom.csv", header="\ufeffx,y")
    assert csv.read_bytes().startswith(b"\xef\xbb\xbfx,y")
    out = run_dlab(dlab_bin, ["knee", "--csv", str(csv)])
    assert out.returncode == 0, out.stderr
    assert "steps up between" in out.stdout


@pytest.mark.parametrize("header,args,text", [
    ("x,\ufeffy", [], r"no column 'y' (columns: x, \ufeffy)"),
    ("x,\x1b[31my", [], r"no column 'y' (columns: x, \x1b[31my)"),
    ("x,y\u200b", [], r"(columns: x, y\u200b)"),
    ("x,y", ["--y", "y\x07"], r"no column 'y\x07'"),
])
def test_unprintable_bytes_in_quoted_input_are_escaped(dlab_bin, tmp_path, header, args, text):
    csv = step_csv(tmp_path / "k.csv", header=header)
    out = run_dlab(dlab_bin, ["knee", "--csv", str(csv), *args])
    assert_one_error(out, 1, text)
    assert not any(c in out.stderr for c in "\x1b\x07\ufeff\u200b")


def test_a_bad_value_in_a_csv_is_quoted_escaped(dlab_bin, tmp_path):
    csv = tmp_path / "k.csv"
    csv.write_text("x,y\n1,2\n2,3\x1b]0;pwned\x07\n3,4\n4,5\n")
    out = run_dlab(dlab_bin, ["knee", "--csv", str(csv)])
    assert_one_error(out, 1, r"k.csv:3: column 'y': '3\x1b]0;pwned\x07' is not a number")
