"""docs/results-schema.md's experiments table is the one generated from tools/experiments.toml
(`just experiments-doc`), and the generator's --check says when it is not."""
from pathlib import Path

from dispatchlab_analysis import experiments_doc
from dispatchlab_analysis.experiments import load_registry

REPO = Path(__file__).resolve().parents[2]


def test_results_schema_experiments_block_is_current():
    doc = (REPO / "docs" / "results-schema.md").read_text()
    begin, end = doc.index(experiments_doc.BEGIN) + len(experiments_doc.BEGIN), doc.index(experiments_doc.END)
    assert doc[begin:end] == experiments_doc.render_block(load_registry()), \
        "docs/results-schema.md's experiments table is not current: run `just experiments-doc`"
    for step in load_registry().steps:
        assert (f"`{step.name}.*`" if step.experiment else step.writes) in doc[begin:end]


def test_experiments_doc_check_mode_says_when_the_block_is_stale(tmp_path, capsys):
    doc = tmp_path / "schema.md"
    doc.write_text(f"intro\n{experiments_doc.BEGIN}old\n{experiments_doc.END}\nrest\n")
    assert experiments_doc.main([str(doc), "--check"]) == 1
    assert "not current" in capsys.readouterr().err
    assert experiments_doc.main([str(doc)]) == 0
    assert experiments_doc.main([str(doc), "--check"]) == 0
    text = doc.read_text()
    assert text.startswith("intro\n") and text.endswith(f"{experiments_doc.END}\nrest\n") and "| `wasm.*` |" in text
