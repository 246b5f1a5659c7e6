"""The wizard speaks the vocabulary's words (accelwiz/vocab.py): strategies as the estimator names them
(`fsdp_full`, `fsdp_grad_op`, `fsdp_hybrid`), the launcher as the plan and `run --print-node-commands` name it
(`node-commands`). Answer files, options and plans written with the old words keep working: they are read as the new
word, with one deprecation note, and write exactly what the new word writes."""

from __future__ import annotations

import pytest

from accelwiz import vocab

MULTINODE = ("system: 2x8xH100\nmodel: gpt2\nnum_machines: 2\ngpus: 8\nstrategy: {strategy}\nlauncher: {launcher}\n"
             "machine_rank: 0\nmain_process_ip: 10.0.0.1\nprecision: bf16\n")


def _init(cli, tmp_path, monkeypatch, strategy: str, launcher: str):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "answers.yaml").write_text(MULTINODE.format(strategy=strategy, launcher=launcher))
    return cli("init", "--answers", "answers.yaml", "--defaults", "--dry-run")


@pytest.mark.parametrize("old", sorted(vocab.RENAMED_STRATEGIES))
def test_an_old_strategy_word_in_an_answer_file_writes_what_the_new_word_writes(cli, tmp_path, monkeypatch, old):
    new = vocab.RENAMED_STRATEGIES[old]
    current = _init(cli, tmp_path, monkeypatch, new, "slurm")
    assert current.exit_code in (0, 1), current.stderr
    assert "old spelling" not in current.stderr
    written = _init(cli, tmp_path, monkeypatch, old, "slurm")
    assert written.exit_code == current.exit_code, written.stderr
    assert written.stdout == current.stdout  # the YAML, the JSON and the plan, byte for byte
    notes = [line for line in written.stderr.splitlines() if "old spelling" in line]
    assert notes == [f"warning: answers.yaml: `strategy: {old}` is the old spelling of `strategy: {new}`; read as "
                     f"{new}: write that, the old spelling is deprecated"]


def test_the_old_launcher_word_in_an_answer_file_plans_node_commands(cli, tmp_path, monkeypatch):
    current = _init(cli, tmp_path, monkeypatch, "zero2", "node-commands")
    assert current.exit_code in (0, 1), current.stderr
    assert "launcher:\n  kind: node-commands" in current.stdout
    for old in ("per-node", "per_node", "Per-Node"):
        written = _init(cli, tmp_path, monkeypatch, "zero2", old)
        assert written.stdout == current.stdout
        assert f"`launcher: {old}` is the old spelling of `launcher: node-commands`" in written.stderr


def test_an_old_word_given_as_an_option_is_named_as_the_option(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = cli("init", "--system", "8xH100-80GB", "--model", "gpt2", "--strategy", "fsdp-grad-op", "--defaults",
                 "--dry-run")
    assert result.exit_code in (0, 1), result.stderr
    assert "--strategy fsdp-grad-op is the old spelling of --strategy fsdp_grad_op" in result.stderr
    assert "distributed_type: FSDP" in result.stdout and "fsdp_reshard_after_forward: false" in result.stdout


def test_renamed_leaves_current_words_and_unknown_ones_to_the_question():
    from accelwiz.wizard.aliases import renamed

    answers = {"strategy": "FSDP_HYBRID", "launcher": "node_commands", "model": "fsdp"}
    assert renamed(answers, where="a.yaml") == (answers, [])
    assert renamed({"strategy": "fsdp-full"}, where="a.yaml") == ({"strategy": "fsdp-full"}, [])  # _select reads it
    assert renamed({"strategy": " FSDP "}, where="option")[0] == {"strategy": "fsdp_full"}


def test_a_plan_written_with_the_old_launcher_word_reads_as_node_commands(tmp_path, capsys):
    from accelwiz.plan_file import load_plan

    plan = tmp_path / "accelerate.plan.yaml"
    plan.write_text("files: {accelerate: accelerate.yaml}\nsystem: {name: 2x8xH100, machines: 2, gpus_per_machine: 8}\n"
                    "launcher: {kind: per-node}\nmodel: {name: gpt2}\ntraining: {micro_batch: 1, sequence_length: 512}\n")
    first, again = load_plan(plan), load_plan(plan)
    assert first.launcher.kind == again.launcher.kind == "node-commands"
    assert first.launcher.supplies_rendezvous
    err = capsys.readouterr().err
    assert err.count("`launcher.kind: per-node` is the old name of `node-commands`") == 1, err  # once per file
    plan.write_text(plan.read_text().replace("per-node", "node-commands"))
    assert load_plan(plan).launcher.kind == "node-commands"
    assert "old name" not in capsys.readouterr().err
