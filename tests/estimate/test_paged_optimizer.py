"""bitsandbytes' paged optimizers (issue 28): `--optimizer paged-adamw|paged-adamw8bit`, the Trainer's `optim`
paged_adamw_32bit/paged_adamw_8bit. Their states are CUDA managed memory (bnb 0.50.2 `get_state_buffer` ->
`F.get_paged`, cudaMallocManaged), outside torch's caching allocator, and their kernels update in place; the GPU is
judged with them where they fit beside the rest and without them (host RAM with them) where they do not.

The states' dtypes and sizes are read from real bitsandbytes optimizers on this CPU (where bnb falls back to plain
tensors: the managed allocation itself needs a GPU); the estimates from the argv a user types."""

from __future__ import annotations

import json
import warnings

import pytest
from typer.testing import CliRunner

from accelwiz.cli import app
from accelwiz.config.training_args import parse_argv
from accelwiz.estimate.paged_states import PAGED_MIN_ELEMENTS
from accelwiz.estimate.states import optimizer_state_bytes
from accelwiz.estimate.step_temporaries import optimizer_step_temporaries
from accelwiz.estimate.strategy import Strategy
from accelwiz.estimate.workload import Workload
from accelwiz.modelspec.lookup import resolve_model
from accelwiz.resolution.workload import resolve_workload

# the HF blog's Llama-2-70B full fine-tuning (2 x 8 A100 80GB, FSDP1, bf16 mixed precision, paged_adamw_32bit)
_70B = ["estimate", "--model", "llama-2-70b", "--system", "2x8xA100-80GB", "--strategy", "fsdp_full",
        "--fsdp-version", "1", "--micro-batch", "1", "--seq-len", "2048", "--precision", "mixed",
        "--gradient-checkpointing", "--attention", "flash", "--format", "json"]
_1B = ["estimate", "--model", "llama-3.2-1b", "--system", "1xA100-80GB", "--strategy", "single", "--micro-batch",
       "1", "--seq-len", "1024", "--precision", "bf16", "--format", "json"]


def _estimate(argv: list[str], optimizer: str) -> dict:
    result = CliRunner().invoke(app, [*argv, "--optimizer", optimizer])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize(("name", "per_element"), [("PagedAdamW", 8), ("PagedAdamW8bit", 2 + 2 * 4 / 256)])
def test_real_bitsandbytes_states_are_what_is_counted(name: str, per_element: float) -> None:
    torch = pytest.importorskip("torch")
    bnb = pytest.importorskip("bitsandbytes")
    parameter = torch.nn.Parameter(torch.zeros(1024, 256, dtype=torch.bfloat16))  # above the paging threshold
    optimizer = getattr(bnb.optim, name)([parameter], lr=1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Paged optimizers are not supported on CPU": the sizes are the same
        optimizer.init_state(optimizer.param_groups[0], parameter, 0, 0)
    state = optimizer.state[parameter]
    held = sum(v.numel() * v.element_size() for k, v in state.items() if torch.is_tensor(v) and "qmap" not in k)
    assert optimizer.is_paged and parameter.numel() >= PAGED_MIN_ELEMENTS
    word = "paged-adamw" if name == "PagedAdamW" else "paged-adamw8bit"
    # a bf16 model: the 32-bit states are fp32 anyway (torch AdamW would keep them bf16: 4 B/param)
    workload = Workload(resolve_model("llama-3.2-1b"), precision="bf16", optimizer=word)
    assert optimizer_state_bytes(workload) / workload.trainable_parameters == per_element == held / parameter.numel()
    assert optimizer_step_temporaries(workload, Strategy("single"))[0] == 0.0


def test_paged_states_leave_torchs_allocator_and_the_step_temporary() -> None:
    torch_adamw, paged = _estimate(_1B, "adamw"), _estimate(_1B, "paged-adamw")
    trainable = paged["workload"]["trainable_parameters"]
    sizes = paged["estimate"]["sizes"]
    # every 2-D tensor of Llama-3.2-1B is paged; its norm weights (2,048 elements) keep torch tensors
    assert 8 * trainable * 0.999 < sizes["paged_states"] < 8 * trainable
    assert sizes["optimizer_states"] == round(8 * trainable - sizes["paged_states"])
    assert torch_adamw["estimate"]["sizes"]["paged_states"] == 0
    # neither allocated nor reserved holds them; nvidia-smi's total does, and they fit: the GPU is judged with them
    peak = paged["estimate"]["peak"]
    assert peak["total"] == peak["reserved"] + peak["runtime"] + sizes["paged_states"]
    assert paged["gpu_need_bytes"] == peak["total"] and paged["verdicts"]["gpu_memory"] == "fits"
    # the optimizer step no longer allocates torch AdamW's bf16 states (4 B/param) and foreach temporary (2 B/param),
    # only the norms' fp32 states that bnb keeps as torch tensors
    step = torch_adamw["estimate"]["phases"]["optimizer"] - paged["estimate"]["phases"]["optimizer"]
    assert abs(step - (6 * trainable - sizes["optimizer_states"])) <= 2


def test_paged_states_that_do_not_fit_page_out_and_host_ram_holds_them() -> None:
    torch_adamw, paged = _estimate(_70B, "adamw"), _estimate(_70B, "paged-adamw")
    assert torch_adamw["verdicts"]["gpu_memory"] == "does not fit"  # the measured run trained (the blog)
    peak, states = paged["estimate"]["peak"], paged["estimate"]["sizes"]["paged_states"]
    gpu = paged["target"]["gpu_memory_bytes"]
    assert peak["total"] > gpu >= peak["reserved"] + peak["runtime"]
    assert paged["gpu_need_bytes"] == peak["reserved"] + peak["runtime"]
    assert paged["verdicts"]["gpu_memory"] == "fits" and "pages them in for every optimizer step" in paged["verdict"]
    # host RAM judged with up to all of them on each of the machine's 8 GPUs
    assert f"with up to {8 * states / 2**30:.1f} GiB of paged optimizer states" in paged["verdict"]


def test_the_trainers_paged_optim_names_are_the_paged_words() -> None:
    for optim, word in (("paged_adamw_32bit", "paged-adamw"), ("paged_adamw_8bit", "paged-adamw8bit")):
        resolved = resolve_workload(trainer_args=parse_argv(["--optim", optim])).optimizer
        assert (resolved.value, resolved.source) == (word, "trainer arguments")
    assert resolve_workload(trainer_args=parse_argv(["--optim", "adamw_torch"])).optimizer.value == "adamw"


def test_an_unknown_optimizer_word_is_refused_with_the_choices() -> None:
    result = CliRunner().invoke(app, [*_1B, "--optimizer", "paged_adamw_32bit"])
    assert result.exit_code != 0 and "paged-adamw" in result.output


def test_the_recommendation_never_offers_a_strategy_the_optimizer_is_refused_under(cli):
    """DeepSpeed's optimizer offload replaces a paged optimizer by DeepSpeedCPUAdam (refusals.py): named, it is
    refused; left to the recommendation and --compare, it is never offered (it once was: ZeRO-3 + NVMe offload)."""
    argv = ("estimate", "--model", "llama-3.1-70b", "--system", "8xA100-40GB", "--optimizer", "paged-adamw")
    named = cli(*argv, "--strategy", "zero3", "--offload-optimizer", "cpu")
    assert named.exit_code == 2 and "DeepSpeedCPUAdam" in named.stderr
    data = json.loads(cli(*argv, "--compare", "--format", "json").stdout)
    offloaded = [row for row in data["compare"] if "ZeRO" in row["strategy"]["label"] and "+" in row["strategy"]["label"]]
    recommended = (data["recommendation"] or {}).get("strategy") or ""
    assert not offloaded and not ("ZeRO" in recommended and "offload" in recommended.lower())
