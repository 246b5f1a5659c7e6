from __future__ import annotations

from tests.corpus.render_doc import DOC, render


def test_corpus_doc_is_current(corpus):
    assert DOC.read_text() == render(corpus / "index.tsv"), "run `python -m tests.corpus.render_doc`"
