"""Real training through `accelwiz run` -> `accelerate launch` on CPU: 1 process, 2-process DDP, 2-process
DeepSpeed ZeRO-2 and ZeRO-3, of a pretrained checkpoint (tests/trainer/conftest.py) with full fine-tuning and
LoRA (and QLoRA where bitsandbytes supports the machine). Each run trains until the loss falls and saves what it
trained, which loads back with from_pretrained; a full run interrupted after a checkpoint resumes exactly; Ctrl-C
during a 2-process run leaves no process behind. Runs are few and short: each launch costs 15-40 s on 2 cores.

DeepSpeed JIT-builds its shared-memory op once (about 30 s); `accelwiz run` caches it in
~/.cache/accelwiz/torch_extensions, so later runs (and CI reruns on the same machine) load it in seconds.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tests.ports import free_port

pytestmark = pytest.mark.slow

HEAD = "compute_environment: LOCAL_MACHINE\nnum_machines: 1\nmain_process_port: {port}\n"
CONFIGS = {
    "single": "distributed_type: 'NO'\nuse_cpu: true\nnum_processes: 1\nmixed_precision: 'no'\n",
    "ddp": "distributed_type: MULTI_GPU\nnum_processes: 2\nmixed_precision: 'no'\n",
    # ZeRO-2 through a DeepSpeed JSON that sets the micro-batch and accumulation (written by write_config)
    "zero2": "distributed_type: DEEPSPEED\nnum_processes: 2\ndeepspeed_config:\n  deepspeed_config_file: {json}\n",
    "zero3": "distributed_type: DEEPSPEED\nnum_processes: 2\nmixed_precision: 'no'\ndeepspeed_config:\n  zero_stage: 3\n"
    "  gradient_accumulation_steps: 2\n  gradient_clipping: 1.0\n",
}
EXPECTED = {
    "single": ("NO", 1, None),
    "ddp": ("MULTI_CPU", 2, None),
    "zero2": ("DEEPSPEED", 2, 2),
    "zero3": ("DEEPSPEED", 2, 3),
}




ZERO2_JSON = {"train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 2, "gradient_clipping": 1.0,
              "zero_optimization": {"stage": 2}}
PLAN = """schema_version: 1
files:
  accelerate: single.yaml
system:
  name: local
model:
  name: {checkpoint}
  source: checkpoint
fine_tuning:
  method: lora
  lora_rank: 4
  lora_alpha: 32
  # PEFT's shorthand as `accelwiz init` writes it (the trainer refused it), plus the head so 6 steps move the loss
  lora_targets: [all-linear, lm_head]
training:
  micro_batch: 2
  gradient_accumulation: 2
  sequence_length: 32
  gradient_checkpointing: true
  precision: fp32
"""


def short_text(tmp_path: Path, checkpoint: Path) -> Path:
    """The corpus's first 600 characters: two batches of 4 x 32 tokens, fewer than an accumulation of 3."""
    from transformers import AutoTokenizer

    from accelwiz.trainer.data import BUNDLED_CORPUS_DIR, training_sequences

    path = tmp_path / "short.txt"
    path.write_text((BUNDLED_CORPUS_DIR / "sonnets.txt").read_text()[:600])
    assert len(training_sequences(path, AutoTokenizer.from_pretrained(checkpoint), 32)) // 4 == 2
    return path


def write_config(tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.yaml"
    json_path = tmp_path / "ds_zero2.json"
    json_path.write_text(json.dumps(ZERO2_JSON))
    path.write_text(HEAD.format(port=free_port()) + CONFIGS[name].format(json=json_path))
    return path


@pytest.fixture()
def chat_jsonl(tmp_path_factory) -> Path:
    """The bundled sonnets as JSONL: plain `text` records and chat `messages` records, alternating. Written for each
    test (a few KB): module-scoped, it would keep the two LoRA runs on one xdist worker (tests/worker_groups.py)."""
    from accelwiz.trainer.data import BUNDLED_CORPUS_DIR

    poems = [p for f in sorted(BUNDLED_CORPUS_DIR.glob("*.txt")) for p in f.read_text().split("\n\n") if p.strip()]
    path = tmp_path_factory.mktemp("data") / "chat.jsonl"
    lines = [json.dumps({"text": p}) if i % 2 else
             json.dumps({"messages": [{"role": "user", "content": "A sonnet, please."},
                                      {"role": "assistant", "content": p}]}) for i, p in enumerate(poems)]
    path.write_text("\n".join(lines) + "\n")
    return path


def sonnets_dataset(tmp_path: Path) -> Path:
    from datasets import Dataset

    from accelwiz.trainer.data import BUNDLED_CORPUS_DIR

    poems = [p for f in sorted(BUNDLED_CORPUS_DIR.glob("*.txt")) for p in f.read_text().split("\n\n") if p.strip()]
    Dataset.from_dict({"text": poems}).save_to_disk(str(tmp_path / "sonnets-dataset"))
    return tmp_path / "sonnets-dataset"


def accelwiz_run(*args: str, cwd: Path, timeout: float = 240) -> subprocess.CompletedProcess:
    """`accelwiz run ...` in its own session, so that a hung run is killed with every worker it started."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "accelwiz", "run", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


def reloaded_logits(directory: Path, probe: dict, base: Path | None = None) -> list[float]:
    """The logits a model (or a base plus adapter) loaded back with from_pretrained gives on the run's probe."""
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(base or directory)
    if base is not None:
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, directory)
    with torch.no_grad():
        logits = model.eval()(input_ids=torch.tensor([probe["input_ids"]])).logits
    return logits[0, -1, :8].tolist()


def checkpoint_parameters(checkpoint: Path) -> int:
    from transformers import AutoModelForCausalLM

    return sum(p.numel() for p in AutoModelForCausalLM.from_pretrained(checkpoint).parameters())


def assert_trained(report: dict, name: str, drop: float) -> None:
    assert (report["distributed_type"], report["world_size"], report["zero_stage"]) == EXPECTED[name]
    assert report["final_loss"] == report["loss_last"] < report["loss_first"] - drop, report["losses"]
    assert len(report["peak_memory_bytes"]) == report["world_size"] and min(report["peak_memory_bytes"]) > 0
    assert report["peak_memory_measure"] == "process_peak_rss" and report["tokens_per_second"] > 0
    assert isinstance(report["parameter_checksum"], float)


@pytest.mark.parametrize("name", list(CONFIGS))
def test_full_fine_tuning_of_a_checkpoint_trains_saves_and_resumes(tmp_path, checkpoint, name):
    """Full fine-tuning of a pretrained checkpoint on 1 process, DDP, ZeRO-2 (batch from its DeepSpeed JSON) and
    ZeRO-3: the loss falls, the saved model loads back with the trained logits, and a run interrupted after its
    step-3 checkpoint resumes to step 6 (on one process, to the bit: step, data position, LR, optimizer)."""
    config, out = write_config(tmp_path, name), tmp_path / "out"
    common = ("--config", str(config), "--model", str(checkpoint), "--steps", "6", "--seq-len", "32", "--lr", "1e-2",
              "--output-dir", str(out))
    if name == "single":  # regression: an epoch shorter than the accumulation cut each step short at its end
        common += ("--gradient-accumulation", "3", "--data", str(short_text(tmp_path, checkpoint)))
    first = accelwiz_run(*common, "--", "--save-every", "3", cwd=tmp_path)
    assert first.returncode == 0, first.stderr[-3000:]
    report = json.loads((out / "run_report.json").read_text())
    assert_trained(report, name, drop=0.3)
    assert report["steps"] == 6 and report["start_step"] == 0 and report["method"] == "full"
    assert report["parameters"] == report["trainable_parameters"] == checkpoint_parameters(checkpoint)
    settings = report["settings"]
    assert settings["model"] == {"value": str(checkpoint), "source": "flag"}
    assert settings["seq_len"] == {"value": 32, "source": "flag"}
    if name == "zero2":  # regression: the JSON's micro-batch and accumulation reach the trainer
        assert settings["micro_batch"] == {"value": 2, "source": "deepspeed json"}
        assert settings["gradient_accumulation"] == {"value": 2, "source": "deepspeed json"}
    assert report["micro_batch"] == settings["micro_batch"]["value"]
    assert report["gradient_accumulation_steps"] == settings["gradient_accumulation"]["value"]
    # every optimizer step trained on exactly the planned micro-batches, across epochs (the DataLoader cycles)
    assert report["tokens"] == 6 * report["gradient_accumulation_steps"] * report["micro_batch"] * 32 * (
        report["world_size"])
    assert report["saved"] == str(out / "model") and (out / "model" / "tokenizer.json").is_file()
    probe = report["logits_probe"]
    assert reloaded_logits(out / "model", probe) == pytest.approx(probe["last_position_head"], rel=1e-4, abs=1e-5)
    assert (out / "checkpoints" / "step-000006" / "trainer_state.json").is_file()

    shutil.rmtree(out / "checkpoints" / "step-000006")  # as if killed after the step-3 checkpoint
    resumed = accelwiz_run(*common, "--resume", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    again = json.loads((out / "run_report.json").read_text())
    assert (again["start_step"], again["steps"], len(again["losses"])) == (3, 6, 3)
    assert again["resumed_from"].endswith("step-000003")
    if name == "single":
        assert again["losses"] == report["losses"][3:]
    else:
        assert again["losses"][0] < report["loss_first"] - 0.2  # continues from trained weights


LORA = ("--lora-targets", "q_proj,v_proj,lm_head", "--lora-alpha", "32")


# LoRA on one process and under ZeRO-3 (the adapter gathered from shards); DDP and ZeRO-2 launch as the full
# fine-tuning runs above launch, and the adapter's save does not depend on them (the suite's time is shared)
@pytest.mark.parametrize("name", ["single", "zero3"])
def test_lora_on_a_checkpoint_trains_and_the_adapter_reloads_with_the_same_logits(
    tmp_path, checkpoint, chat_jsonl, name
):
    """LoRA on 1 process (everything from the plan beside the YAML, chat JSONL through the chat template) and
    under ZeRO-3 (a `datasets` directory): the loss falls, and the adapter saved with save_pretrained loads back
    onto the checkpoint with the logits the trained model gave."""
    config, out = write_config(tmp_path, name), tmp_path / "out"
    args = ["--config", str(config), "--steps", "6", "--lr", "2e-2", "--output-dir", str(out)]
    if name == "single":
        config.with_name(config.stem + ".plan.yaml").write_text(PLAN.format(checkpoint=checkpoint))
        args += ["--data", str(chat_jsonl)]
    else:
        args += ["--model", str(checkpoint), "--method", "lora", "--seq-len", "32"]
        args += ["--data", str(sonnets_dataset(tmp_path))]
        args += ["--", *LORA]
    run = accelwiz_run(*args, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads((out / "run_report.json").read_text())
    assert_trained(report, name, drop=0.2)
    assert report["method"] == "lora" and report["saved"] == str(out / "adapter")
    assert 0 < report["trainable_parameters"] < report["parameters"] // 5
    settings = report["settings"]
    if name == "single":
        assert "training with model" in run.stderr and "method lora (plan)" in run.stderr
        assert {k: settings[k]["source"] for k in ("model", "micro_batch", "gradient_accumulation", "seq_len",
                                                   "gradient_checkpointing", "method", "lora_rank", "lora_targets")
                } == dict.fromkeys(("model", "micro_batch", "gradient_accumulation", "seq_len",
                                    "gradient_checkpointing", "method", "lora_rank", "lora_targets"), "plan")
        assert (report["micro_batch"], report["gradient_accumulation_steps"], report["seq_len"]) == (2, 2, 32)
        assert report["gradient_checkpointing"] is True and settings["lora_rank"]["value"] == 4
        assert settings["lora_targets"]["value"] == ["all-linear", "lm_head"]
        # issue 16: the report's estimate is of this LoRA run (it was the full fine-tuning estimate, byte for byte)
        assert report["estimate"]["available"], report["estimate"]
        assert report["estimate"]["workload"] == {"method": "lora", "lora_rank": 4, "gradient_checkpointing": True,
                                                  "seq_len": 32, "micro_batch": 2}
        adapter = json.loads((out / "adapter" / "adapter_config.json").read_text())
        assert set(adapter["target_modules"]) == {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj",
                                                  "down_proj", "lm_head"}  # every linear, as peft's all-linear
    probe = report["logits_probe"]
    logits = reloaded_logits(out / "adapter", probe, base=checkpoint)
    assert logits == pytest.approx(probe["last_position_head"], rel=1e-4, abs=1e-5)


def test_qlora_trains_a_4bit_checkpoint_where_bitsandbytes_supports_this_machine(tmp_path, checkpoint):
    from accelwiz.trainer.finetune import qlora_unsupported_reason

    reason = qlora_unsupported_reason()
    if reason is not None:
        pytest.skip(reason)
    config, out = write_config(tmp_path, "single"), tmp_path / "out"
    run = accelwiz_run("--config", str(config), "--model", str(checkpoint), "--method", "qlora", "--steps", "6",
                       "--seq-len", "32", "--micro-batch", "4", "--lr", "2e-2", "--output-dir", str(out), "--", *LORA,
                       cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads((out / "run_report.json").read_text())
    losses = report["losses"]  # one 4-bit step is noisy: compare the last two steps with the first
    assert (losses[-1] + losses[-2]) / 2 < losses[0] - 0.1, losses
    assert report["method"] == "qlora" and (out / "adapter" / "adapter_model.safetensors").is_file()
    assert report["parameters"] == checkpoint_parameters(checkpoint) + report["trainable_parameters"]


def _command_line(process: psutil.Process) -> str:
    """A live process's command line; "" for one that has exited (a zombie until its parent reaps it)."""
    try:
        return " ".join(process.cmdline())
    except psutil.Error:
        return ""


def test_ctrl_c_during_a_two_process_run_leaves_nothing_running(tmp_path):
    config = write_config(tmp_path, "ddp")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "accelwiz",
            "run",
            "--config",
            str(config),
            "--model",
            "tiny",
            "--steps",
            "100000",
            "--output-dir",
            str(tmp_path / "out"),
        ],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    tree: dict[int, psutil.Process] = {}
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # the launcher and both workers, importing or training
            tree.update({p.pid: p for p in psutil.Process(proc.pid).children(recursive=True)})
            workers = [p for p in tree.values() if "train.py" in _command_line(p)]
            if len(workers) >= 2:
                break
            time.sleep(0.2)
        assert len(workers) >= 2, "the two workers never started"
        time.sleep(2)
        tree.update({p.pid: p for p in psutil.Process(proc.pid).children(recursive=True)})
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 130
        gone, alive = psutil.wait_procs(list(tree.values()), timeout=5)
        assert alive == [], [_command_line(p) for p in alive]
    finally:  # whatever failed above, no 100000-step run outlives the test
        for process in [psutil.Process(proc.pid), *tree.values()] if proc.poll() is None else tree.values():
            with contextlib.suppress(psutil.Error):
                process.kill()
