"""The worked examples of docs/posttraining.md: the section has the examples it promises, and its quoted `done:`
lines are matched as the test reads them. tests/test_docs_commands.py runs them, with every other documented
command, from the page's own text."""

from __future__ import annotations

from tests.doc_pages import REPO, commands, loose, section


def test_the_page_has_its_examples():
    found = commands(section(REPO / "docs" / "posttraining.md", "Worked examples"))
    lines = [c.line for c in found]
    assert lines[0] == "accelwiz example demo && cd demo"
    assert any("--kind dpo" in line for line in lines) and any("--kind grpo" in line for line in lines)
    assert any(q.startswith("done: dpo step 4/4") for c in found for q in c.quoted)
    assert any(q.startswith("done: grpo step 4/4") for c in found for q in c.quoted)


def test_a_quoted_line_leaves_measurements_and_dots_free():
    assert loose("done: dpo step 4/4, loss 0.693 -> 0.189").search("done: dpo step 4/4, loss 0.693 -> 0.2")
    assert not loose("done: dpo step 4/4, loss 0.693 -> 0.189").search("done: dpo step 3/4, loss 0.693 -> 0.2")
    assert loose("a ... z").search("a b c z") and loose("error x, ...").search("error x, and more")
    done = loose("done: step 30/30, loss 5.567 -> 3.346, 8,971 tokens/s, peak 433 MiB (process_peak_rss)")
    assert done.search("done: step 30/30, loss 5.567 -> 3.346, 10,212 tokens/s, peak 431 MiB (process_peak_rss)")
    assert not done.search("done: step 29/30, loss 5.567 -> 3.346, 10,212 tokens/s, peak 431 MiB (process_peak_rss)")
