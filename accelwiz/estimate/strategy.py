"""How the model states are spread over GPUs, host RAM and NVMe; and which strategies are faster than others.

Speed ranking, fastest first (`SPEED_RANK`), the order `recommend` tries strategies in:

1. single GPU / DDP: no extra communication beyond the gradient all-reduce (2Ψ per step).
2. ZeRO-1: same communication volume as DDP (reduce-scatter + all-gather = 2Ψ); only the optimizer step is
   sharded, so it costs nearly nothing.
3. ZeRO-2 ≈ FSDP SHARD_GRAD_OP: still 2Ψ, but gradients are reduce-scattered in buckets during backward, with
   more, smaller collectives.
4. ZeRO-3 ≈ FSDP FULL_SHARD: parameters are all-gathered again in backward: 3Ψ (1.5× DDP, ZeRO paper §7), and
   every layer waits for its gather unless prefetch hides it.
5. FSDP HYBRID_SHARD: full sharding inside a node plus an all-reduce across nodes; used only for multi-node
   plans, where it is ranked after plain full sharding because it holds more memory per GPU.
6. CPU optimizer offload: the optimizer step runs on the CPU (DeepSpeedCPUAdam) and gradients/parameters cross
   PCIe every step; typically several times slower per step than on-GPU Adam.
7. CPU parameter offload: parameters also cross PCIe for every forward and backward.
8. NVMe offload: like 6-7, bounded by disk bandwidth instead of PCIe.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal

from accelwiz.vocab import STRATEGY_KINDS, StrategyKind

Kind = StrategyKind  # the one vocabulary's strategy words (accelwiz/vocab.py), which the wizard speaks too
Device = Literal["none", "cpu", "nvme"]

_KIND_LABEL = {
    "single": "single GPU",
    "ddp": "DDP",
    "zero1": "ZeRO-1",
    "zero2": "ZeRO-2",
    "zero3": "ZeRO-3",
    "fsdp_full": "FSDP full shard",
    "fsdp_grad_op": "FSDP shard-grad-op",
    "fsdp_hybrid": "FSDP hybrid",
}
_KIND_RANK = {
    "single": 0,
    "ddp": 0,
    "zero1": 1,
    "zero2": 2,
    "fsdp_grad_op": 2,
    "zero3": 3,
    "fsdp_full": 3,
    "fsdp_hybrid": 4,
}
_OFFLOAD_RANK = {"none": 0, "cpu": 1, "nvme": 3}
# transformers builds the model under deepspeed.zero.Init when its DeepSpeed config exists before from_pretrained
# (modeling_utils `get_init_context`: `is_deepspeed_zero3_enabled()`, a weakref to a live HfDeepSpeedConfig): the
# HF Trainer's TrainingArguments(deepspeed=...) or `accelerate launch`'s DeepSpeed env (transformers 5.25
# training_args.py), and accelerate's Accelerator (1.16 `DeepSpeedPlugin.select` -> `set_deepspeed_weakref`)
ZERO_INIT_DEFAULT = ("the default: DeepSpeed's config exists before from_pretrained, as under the HF Trainer and "
                     "accelerate")

# FSDP's wrap where nothing says otherwise (flags alone): a unit per block, as `init` writes it (fsdp_wrap.py)
FSDP_WRAP_DEFAULT = "the default: one unit per transformer block (TRANSFORMER_BASED_WRAP, as `init` writes it)"


@dataclass(frozen=True)
class Strategy:
    kind: Kind
    offload_optimizer: Device = "none"
    offload_param: Device = "none"
    gpus_per_node: int = 1
    nodes: int = 1
    fsdp_version: int = 2
    # FSDP1's use_orig_params (accelerate launch's default: true): a unit may then mix frozen and trainable
    # parameters, and its flat gradient covers all of them (states.py)
    fsdp_use_orig_params: bool = True
    # accelerate upcasts a 16-bit model to fp32 before FSDP wraps it (states.py `as_the_engine_trains`); False: FSDP
    # wrapped outside accelerate (a plain torch loop: llama-recipes, torchtitan) keeps the shards as loaded
    fsdp_upcast: bool = True
    # ZeRO-3 parameter coordinator settings a DeepSpeed JSON may set (None: DeepSpeed's defaults, memory.py)
    zero3_max_live_parameters: int | None = None
    zero3_max_reuse_distance: int | None = None
    # "auto": filled from the model's hidden size by the HF Trainer and accelerate (zero3_gathered.py)
    zero3_prefetch_bucket_size: int | Literal["auto"] | None = None
    zero3_param_persistence_threshold: int | Literal["auto"] | None = None
    zero_reduce_bucket_size: int | Literal["auto"] | None = None  # ZeRO-1/2/3's reduce bucket, elements
    # DeepSpeed's bf16 section (0.19.8): the ZeRO optimizer's master copy and its Adam states in bf16, not fp32
    bf16_master_weights_and_grads: bool = False
    bf16_optimizer_states: bool = False
    # who said them, for the assumption line: "" (off, DeepSpeed's default), the JSON's section or the flags
    # (bf16_master.py `with_bf16_master`)
    bf16_master_note: str = field(default="", compare=False)
    # where the processes train: "cpu" holds every tensor in host RAM (estimate/cpu.py judges it there)
    device: Literal["gpu", "cpu"] = "gpu"
    # ZeRO-3: transformers builds the model under deepspeed.zero.Init (partitioned as it is created). False where
    # the run's stack does not (a YAML's zero3_init_flag false before accelerate 1.0: configured_strategy.py) or the
    # script loads its model first (--no-zero3-init: `with_zero3_init`); a quantized base never is (loading.py
    # `under_zero_init`)
    zero_init: bool = True
    # who said zero_init, for the assumption line and the JSON (provenance, not part of what a strategy is):
    # "default", "yaml" (the YAML's zero3_init_flag on the run's accelerate) or "flag" (--zero3-init), in words
    zero_init_source: str = field(default="default", compare=False)
    zero_init_note: str = field(default=ZERO_INIT_DEFAULT, compare=False)
    # FSDP: "block", one unit per transformer block (TRANSFORMER_BASED_WRAP); "none", the whole model one unit
    # (NO_WRAP, accelerate's default where the YAML names no policy): gathered whole (fsdp_wrap.py)
    fsdp_wrap: Literal["block", "none"] = "block"
    fsdp_wrap_source: str = field(default="default", compare=False)  # "default", "yaml" or "flag"
    fsdp_wrap_note: str = field(default=FSDP_WRAP_DEFAULT, compare=False)

    @property
    def world_size(self) -> int:
        return self.gpus_per_node * self.nodes

    @property
    def is_deepspeed(self) -> bool:
        return self.kind.startswith("zero")

    @property
    def is_fsdp(self) -> bool:
        return self.kind.startswith("fsdp")

    @property
    def shard_degree(self) -> int:
        """How many ranks share one copy of the sharded states (hybrid: the GPUs of one node)."""
        if self.kind in ("single", "ddp"):
            return 1
        return self.gpus_per_node if self.kind == "fsdp_hybrid" else self.world_size

    @property
    def shards_optimizer(self) -> bool:
        return self.kind not in ("single", "ddp")

    @property
    def shards_gradients(self) -> bool:
        return self.kind not in ("single", "ddp", "zero1")

    @property
    def shards_parameters(self) -> bool:
        return self.kind in ("zero3", "fsdp_full", "fsdp_hybrid")

    @property
    def speed_rank(self) -> int:
        """Smaller is faster; see the module docstring for the reasoning."""
        offload = max(
            _OFFLOAD_RANK[self.offload_optimizer],
            _OFFLOAD_RANK[self.offload_param] + (1 if self.offload_param != "none" else 0),
        )
        return _KIND_RANK[self.kind] + 10 * offload

    @property
    def label(self) -> str:
        """'ZeRO-3 + CPU offload (optimizer, params)', 'FSDP2 full shard', 'DDP'."""
        base = _KIND_LABEL[self.kind]
        if self.is_fsdp:
            base = base.replace("FSDP", f"FSDP{self.fsdp_version}" if self.fsdp_version != 1 else "FSDP1")
        parts = []
        for device in ("cpu", "nvme"):
            what = [
                name
                for name, dev in (("optimizer", self.offload_optimizer), ("params", self.offload_param))
                if dev == device
            ]
            if what:
                parts.append(f"{device.upper() if device == 'cpu' else 'NVMe'} offload ({', '.join(what)})")
        if self.kind == "zero3" and not self.zero_init:  # the whole model reaches every GPU at loading
            base += " without zero.Init"
        if self.is_fsdp and self.fsdp_wrap == "none":  # gathered whole in forward and backward
            base += ", one unit"
        return " + ".join([base, *parts])

    @property
    def short_label(self) -> str:
        """A table-width label: 'ZeRO-3 +CPU opt,param', 'FSDP2 full'."""
        base = _KIND_LABEL[self.kind].replace(" shard-grad-op", " grad-op").replace(" full shard", " full")
        if self.is_fsdp:
            base = base.replace("FSDP", f"FSDP{self.fsdp_version}") + (" 1-unit" if self.fsdp_wrap == "none" else "")
        what = [n for n, d in (("opt", self.offload_optimizer), ("param", self.offload_param)) if d != "none"]
        if not what:
            return base
        if self.is_fsdp:  # FSDP offloads parameters, gradients and optimizer together
            return f"{base} +CPU"
        device = "NVMe" if "nvme" in (self.offload_optimizer, self.offload_param) else "CPU"
        return f"{base} +{device} {','.join(what)}"


def candidate_strategies(gpus_per_node: int, nodes: int = 1) -> list[Strategy]:
    """Every strategy worth comparing for this many GPUs, fastest first."""
    world = gpus_per_node * nodes
    kw: dict[str, Any] = {"gpus_per_node": gpus_per_node, "nodes": nodes}
    plain: list[Strategy] = [Strategy("single" if world == 1 else "ddp", **kw)]
    plain += [Strategy(k, **kw) for k in ("zero1", "zero2", "fsdp_grad_op", "zero3", "fsdp_full")]
    if nodes > 1:  # accelerate's FSDP2 reads no sharding strategy: HYBRID_SHARD is FSDP1's (as `init` writes it)
        plain.append(Strategy("fsdp_hybrid", fsdp_version=1, **kw))
    plain += [
        Strategy("zero2", offload_optimizer="cpu", **kw),
        Strategy("zero3", offload_optimizer="cpu", **kw),
        Strategy("zero3", offload_optimizer="cpu", offload_param="cpu", **kw),
        Strategy("fsdp_full", offload_optimizer="cpu", offload_param="cpu", **kw),
        Strategy("zero3", offload_optimizer="nvme", offload_param="nvme", **kw),
    ]
    return sorted(plain, key=lambda s: s.speed_rank)  # stable: ZeRO before FSDP within a tie


# `--strategy`'s words (dashes read as underscores): the one vocabulary's kinds, and the libraries' own names
_KIND_NAMES = {**{kind: kind for kind in STRATEGY_KINDS}, "zero0": "ddp", "fsdp": "fsdp_full",
               "fsdp_full_shard": "fsdp_full", "fsdp_shard_grad_op": "fsdp_grad_op", "fsdp_hybrid_shard": "fsdp_hybrid"}


def strategy_from_options(
    kind: str,
    *,
    gpus_per_node: int,
    nodes: int = 1,
    offload_optimizer: str = "none",
    offload_param: str = "none",
    fsdp_version: int = 2,
    fsdp_upcast: bool = True,
) -> Strategy:
    """`--strategy zero3 --offload-optimizer cpu`: validated, with the combinations the libraries accept."""
    from accelwiz.errors import UsageError

    key = kind.strip().lower().replace("-", "_")
    if key not in _KIND_NAMES:
        raise UsageError(f"unknown strategy `{kind}`", hint=f"choose one of {', '.join(sorted(_KIND_NAMES))}")
    for flag, value in (("--offload-optimizer", offload_optimizer), ("--offload-param", offload_param)):
        if value not in ("none", "cpu", "nvme"):
            raise UsageError(f"invalid {flag} `{value}`", hint="choose none, cpu or nvme")
    if gpus_per_node < 1 or nodes < 1:
        raise UsageError("--gpus and --nodes must be at least 1", hint="pass e.g. --gpus 8 --nodes 2")
    resolved: Any = _KIND_NAMES[key]
    if not fsdp_upcast and not resolved.startswith("fsdp"):
        raise UsageError(f"--no-fsdp-upcast with --strategy {kind}: it says FSDP runs outside accelerate",
                         hint="drop --no-fsdp-upcast, or pass --strategy fsdp")
    if resolved in ("single", "ddp"):
        resolved = "single" if gpus_per_node * nodes == 1 else "ddp"
    return Strategy(
        resolved,
        offload_optimizer=_optimizer_offload(resolved, offload_optimizer, offload_param),
        offload_param=offload_param,  # type: ignore[arg-type]
        gpus_per_node=gpus_per_node,
        nodes=nodes,
        fsdp_version=fsdp_version,
        fsdp_upcast=fsdp_upcast,
    )


def chosen_strategy(strategy: Strategy | None) -> str:
    """How a refusal names the strategy a strategy-specific flag met (--zero3-init, --fsdp-wrap)."""
    return f"the strategy is {strategy.label}" if strategy is not None else \
        "no strategy is given (the recommendation would pick one)"


def flag_over_file(flag: str, given: object, current: object, current_note: str, from_file: bool) -> str:
    """The note of a flag that replaces a value: where the files had said it, whether the flag won over them or
    agreed with them (--zero3-init over zero3_init_flag, --fsdp-wrap over fsdp_auto_wrap_policy)."""
    if not from_file:
        return flag
    return f"{flag}, which wins over {current_note}" if current != given else f"{flag}, agreeing with {current_note}"


def _optimizer_offload(kind: str, offload_optimizer: str, offload_param: str) -> Any:
    """The optimizer's offload device once the offloads are checked against the strategy kind (UsageError for
    what the libraries refuse or silently replace); FSDP's is its parameters'."""
    from accelwiz.errors import UsageError

    if kind in ("single", "ddp") and (offload_optimizer != "none" or offload_param != "none"):
        raise UsageError("offload needs ZeRO or FSDP", hint="pass --strategy zero2 (optimizer) or zero3")
    if offload_param != "none" and kind not in ("zero3", "fsdp_full", "fsdp_hybrid", "fsdp_grad_op"):
        raise UsageError(
            f"parameter offload needs ZeRO-3 or FSDP (strategy is {kind})", hint="pass --strategy zero3"
        )
    if kind.startswith("fsdp"):
        if "nvme" in (offload_optimizer, offload_param):
            raise UsageError("FSDP cannot offload to NVMe", hint="use --strategy zero3 for NVMe offload")
        if offload_param == "none" and offload_optimizer != "none":  # was silently made a parameter offload
            raise UsageError(
                "FSDP has no optimizer-only offload: accelerate's fsdp_offload_params (torch's CPUOffload"
                "(offload_params=True)) moves parameters, gradients and the optimizer step together",
                hint="pass --offload-param cpu as well, or --strategy zero2 for optimizer-only offload",
            )
        return offload_param  # fsdp_offload_params moves parameters, gradients and optimizer
    if kind in ("zero1", "zero2") and offload_optimizer == "nvme":
        raise UsageError(
            "NVMe optimizer offload needs ZeRO-3 (DeepSpeed treats it as CPU at stage 1/2)",
            hint="pass --strategy zero3 or --offload-optimizer cpu",
        )
    return offload_optimizer
