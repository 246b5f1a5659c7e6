"""`<` on a real pseudo-terminal where there is nothing to go back to (issue 31: "`<` on a text prompt goes back and
immediately forward again"). The first question, or the one answer edited from the review, has no earlier
question asked: the flow comes back to the same prompt, and without a word it looked like back-then-forward. It
now says so; where there is an earlier question, `<` goes there without that line."""

from __future__ import annotations

import os
import shutil

import pytest
import yaml

from accelwiz.wizard.prompters import NOTHING_BEFORE

pexpect = pytest.importorskip("pexpect")

DOWN, ENTER = "\x1b[B", "\r"
SAID = NOTHING_BEFORE.split(":")[1].split(",")[0].strip()  # "no earlier question was asked here"
pytestmark = pytest.mark.skipif(shutil.which("accelwiz") is None, reason="the accelwiz script is not installed")


def spawn(arguments: str, cwd):
    return pexpect.spawn(f"accelwiz init {arguments}", cwd=str(cwd), encoding="utf-8", timeout=20,
                         dimensions=(50, 200),
                         env={**os.environ, "TERM": "xterm", "NO_COLOR": "1", "PROMPT_TOOLKIT_NO_CPR": "1"})


def test_back_at_the_answer_edited_from_the_review_says_it_stays(tmp_path):
    child = spawn("--system 1xT4 --model '' --gpus 1 --strategy single --precision fp16", tmp_path)
    for prompt in ("Who runs", "Micro-batch", "How many machines", "target global batch", "accumulation", "Clip",
                   "torch.compile"):
        child.expect(prompt)
        child.send(ENTER)
    child.expect("Write these files")
    child.send(DOWN + ENTER)  # Edit one answer
    child.expect("Which answer")
    child.send("micro")
    child.send(ENTER)
    child.expect(r"Micro-batch size per GPU\? \[1\]")
    child.send("<")
    child.expect(SAID)  # said before the same prompt is drawn again
    child.expect(r"Micro-batch size per GPU\? \[1\]")
    child.send("4" + ENTER)
    child.expect("Write these files")
    child.send(ENTER)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert yaml.safe_load((tmp_path / "accelerate.plan.yaml").read_text())["training"]["micro_batch"] == 4


def test_back_with_an_earlier_question_goes_there_without_the_line(tmp_path):
    child = spawn("--system 1xT4 --model '' --gpus 1 --strategy single --precision fp16", tmp_path)
    child.expect("Who runs")
    child.send("<")  # the first question asked: it stays, and says so
    child.expect(SAID)
    child.expect("Who runs")
    child.send(ENTER)
    child.expect("Micro-batch")
    child.send("<")  # back to the loop owner question, with no word about staying
    child.expect("Who runs")
    assert SAID not in child.before
    child.send(ENTER)
    child.expect(r"Micro-batch size per GPU\? \[1\]")
    child.sendcontrol("c")
    child.expect(pexpect.EOF)
    child.close()
    assert list(tmp_path.iterdir()) == []
