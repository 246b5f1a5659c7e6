"""PEFT's `modules_to_save` (`--lora-modules-to-save`): whole modules trained beside LoRA's adapters, counted as PEFT
builds them, proven against the real objects on this CPU: a tiny transformers Llama (tied and untied), PEFT's
get_peft_model (through the built-in trainer's own `apply_method` where the trainer runs it), one torch AdamW
step, and every tensor autograd saves. The estimate is read from `accelwiz estimate --format json`, the command a
user types, with the tiny model's config.json as --model."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from typer.testing import CliRunner

from accelwiz.cli import app

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
peft = pytest.importorskip("peft")

from tests.estimate.saved_storages import SavedStorages  # noqa: E402

_TINY = {"model_type": "llama", "vocab_size": 512, "hidden_size": 64, "intermediate_size": 128,
         "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 512}
_SEQ = 128
_DTYPES = {"bf16": torch.bfloat16, "fp32": torch.float32}


def _config(tmp_path: Path, tied: bool) -> Path:
    path = tmp_path / ("tied" if tied else "untied") / "config.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({**_TINY, "tie_word_embeddings": tied, "architectures": ["LlamaForCausalLM"]}))
    return path


def _estimate(config: Path, *extra: str) -> dict:
    argv = ["estimate", "--model", str(config), "--lora", "--lora-rank", "4", "--lora-target", "q_proj",
            "--lora-target", "v_proj", "--strategy", "single", "--gpu-memory", "80GiB", "--seq-len", str(_SEQ),
            "--format", "json", *extra]
    result = CliRunner().invoke(app, argv)
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def _tiny(tied: bool, dtype: torch.dtype) -> torch.nn.Module:
    config = transformers.LlamaConfig(**{k: v for k, v in _TINY.items() if k != "model_type"},
                                      tie_word_embeddings=tied)
    torch.manual_seed(0)
    return transformers.LlamaForCausalLM(config).to(dtype)


def _peft(tied: bool, dtype: torch.dtype, saved: list[str], *, trainer: bool) -> torch.nn.Module:
    """The LoRA model as a run builds it: the built-in trainer's `apply_method` (its base loaded in `dtype`), or
    a script's plain get_peft_model."""
    model = _tiny(tied, dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PEFT warns that a tied layer in modules_to_save unties it
        if trainer:
            from accelwiz.trainer.finetune import apply_method

            return apply_method(model, "lora", 4, 8, ["q_proj", "v_proj"], False, 0.0, saved)
        config = peft.LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"], modules_to_save=saved or None)
        return peft.get_peft_model(model, config)


def _measured(model: torch.nn.Module, autocast: bool) -> dict[str, int]:
    """Bytes of every parameter (each storage once), of the gradients after one backward (under bf16 autocast,
    as the Accelerator runs mixed precision), and of torch AdamW's two moments after one step; and the
    trainable count."""
    unique = {p.untyped_storage().data_ptr(): p for p in model.parameters()}
    trainable = [p for p in unique.values() if p.requires_grad]
    ids = torch.randint(0, _TINY["vocab_size"], (1, _SEQ))
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
        loss = model(input_ids=ids, labels=ids).loss
    loss.backward()
    gradients = sum(p.grad.numel() * p.grad.element_size() for p in trainable)
    optimizer = torch.optim.AdamW(trainable, foreach=False)
    optimizer.step()
    states = sum(t.numel() * t.element_size() for s in optimizer.state.values()
                 for key, t in s.items() if key in ("exp_avg", "exp_avg_sq"))
    return {"weights": sum(p.numel() * p.element_size() for p in unique.values()), "gradients": gradients,
            "optimizer_states": states, "trainable": sum(p.numel() for p in trainable)}


def _flags(saved: list[str]) -> list[str]:
    return [arg for name in saved for arg in ("--lora-modules-to-save", name)]


# (precision flags, the real base dtype, the built-in trainer's model or a script's)
_RUNS = [
    (["--precision", "mixed", "--gradient-checkpointing"], "bf16", True),  # the trainer's base: 16-bit, autocast
    (["--precision", "bf16", "--base-dtype", "bf16"], "bf16", False),  # a script's bf16 load: the copy bf16
    (["--precision", "fp32"], "fp32", True),
]


@pytest.mark.parametrize("tied", [False, True])
@pytest.mark.parametrize("saved", [[], ["lm_head"], ["embed_tokens"], ["embed_tokens", "lm_head"]])
@pytest.mark.parametrize(("precision", "dtype", "trainer"), _RUNS)
def test_states_are_those_of_the_real_peft_model(tmp_path, tied, saved, precision, dtype, trainer):
    report = _estimate(_config(tmp_path, tied), *precision, *_flags(saved))
    measured = _measured(_peft(tied, _DTYPES[dtype], saved, trainer=trainer), autocast="mixed" in precision)
    sizes = report["estimate"]["sizes"]
    assert report["workload"]["trainable_parameters"] == measured["trainable"]
    assert report["workload"]["modules_to_save"] == saved
    for name in ("weights", "gradients", "optimizer_states"):
        assert sizes[name] == measured[name], (name, sizes[name], measured[name])


def test_each_name_is_its_own_copy_of_a_tied_embedding(tmp_path):
    """A tied LM head shares the embedding's weight; each name gets a copy of its own, vocab x hidden."""
    config = _config(tmp_path, tied=True)
    one, both = (_estimate(config, *_flags(s))["workload"]["saved_parameters"]
                 for s in (["lm_head"], ["embed_tokens", "lm_head"]))
    assert one == _TINY["vocab_size"] * _TINY["hidden_size"] and both == 2 * one


def _saved_bytes(model: torch.nn.Module) -> int:
    """Bytes of every tensor autograd saves for backward in one forward (each storage once, parameters aside)."""
    ids = torch.randint(0, _TINY["vocab_size"], (1, _SEQ))
    with SavedStorages() as saved:
        model(input_ids=ids, labels=ids)
    return saved.bytes(model)


@pytest.mark.parametrize(("precision", "dtype"), [(["--precision", "bf16", "--base-dtype", "bf16"], "bf16"),
                                                  (["--precision", "fp32"], "fp32")])
def test_a_trained_head_keeps_its_input(tmp_path, precision, dtype):
    """The frozen head keeps nothing of its input; its trained copy keeps it for the weight's gradient."""
    config = _config(tmp_path, tied=False)
    estimated = [_estimate(config, *precision, *_flags(s))["estimate"]["sizes"]["activations"]
                 for s in ([], ["lm_head"])]
    real = [_saved_bytes(_peft(False, _DTYPES[dtype], s, trainer=False)) for s in ([], ["lm_head"])]
    assert estimated[1] - estimated[0] == real[1] - real[0] > 0


@pytest.mark.parametrize(("extra", "said"), [
    (["--lora", "--lora-modules-to-save", "score"], "--lora-modules-to-save score: no module of"),
    (["--lora-modules-to-save", "lm_head"], "full fine-tuning trains every module already"),
    (["--qlora", "--lora-modules-to-save", "q_proj"], "hold 4-bit weights under QLoRA"),
])
def test_refused_in_one_line_with_the_candidates(extra, said):
    result = CliRunner().invoke(app, ["estimate", "--model", "llama-3.2-1b", *extra])
    assert result.exit_code == 2, result.output
    assert said in result.output and "Traceback" not in result.output
    if "no module" in said:
        assert "embed_tokens" in result.output and "lm_head" in result.output  # the candidates


def test_the_plan_carries_it_to_the_estimate_and_to_trls_lora_config(tmp_path):
    """`lora_modules_to_save` in the plan: the resolved workload, the estimator's Workload and the LoraConfig TRL's
    trainers get (trainer/trl_run.py) all name the same modules; a full fine-tuning plan refuses it."""
    from types import SimpleNamespace

    from accelwiz.estimate.resolved import to_workload
    from accelwiz.modelspec.lookup import spec_from_hf_config
    from accelwiz.plan_file import PlanFineTuning
    from accelwiz.resolution.workload import resolve_workload
    from accelwiz.trainer.trl_run import _peft

    with pytest.raises(ValueError, match="lora_modules_to_save"):
        PlanFineTuning(method="full", lora_modules_to_save=["lm_head"])

    class Plan:  # the two sections plan_layer reads, as PlanFile has them
        fine_tuning = PlanFineTuning(method="lora", lora_modules_to_save=["embed_tokens", "lm_head"])

        class training:  # noqa: N801
            micro_batch, gradient_accumulation, sequence_length, precision = 1, 1, 128, "bf16"
            optimizer, gradient_checkpointing, attention = "adamw", False, "sdpa"

    resolved = resolve_workload(plan=Plan())  # type: ignore[arg-type]
    assert (resolved.lora_modules_to_save.value, resolved.lora_modules_to_save.source) == (
        ("embed_tokens", "lm_head"), "plan")
    spec = spec_from_hf_config({**_TINY, "tie_word_embeddings": False}, name="tiny", source="test")
    workload = to_workload(resolved, spec)
    assert workload.saved_parameters == 2 * _TINY["vocab_size"] * _TINY["hidden_size"]
    config = _peft(SimpleNamespace(**{name: getattr(resolved, name) for name in (
        "method", "lora_rank", "lora_alpha", "lora_targets", "lora_dropout", "lora_modules_to_save")}))
    assert config.modules_to_save == ["embed_tokens", "lm_head"]


@pytest.mark.parametrize("strategy", ["zero2", "zero3", "fsdp_full"])
def test_engines_shard_and_widen_a_copy_as_every_trainable_parameter(strategy):
    """Under DeepSpeed (its 16-bit cast, fp32 master and states) and accelerate's FSDP (its fp32 upcast of every
    trainable parameter under mixed precision) the copies are trainable parameters like the adapters: the
    gradients and optimizer states per trainable parameter are the adapters' alone, with or without them."""
    def states(*extra: str) -> tuple[dict, int]:
        argv = ["estimate", "--model", "llama-3.2-1b", "--lora", "--system", "2xA100-80GB", "--strategy", strategy,
                "--seq-len", "512", "--format", "json", *extra]
        result = CliRunner().invoke(app, argv)
        assert result.exit_code in (0, 1), result.output
        report = json.loads(result.stdout)
        return report["estimate"]["sizes"], report["workload"]["trainable_parameters"]

    (plain, adapters), (saved, trainable) = states(), states("--lora-modules-to-save", "lm_head")
    assert trainable > 10 * adapters  # the tied head's copy: 128,256 x 2,048
    for name in ("gradients", "optimizer_states"):
        assert saved[name] / trainable == pytest.approx(plain[name] / adapters, rel=1e-9), name
