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

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from accelwiz.vocab import StrategyKind

if TYPE_CHECKING:
    from accelwiz.effective import EffectiveConfig

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
    # where the processes train: "cpu" holds every tensor in host RAM (estimate/cpu.py judges it there)
    device: Literal["gpu", "cpu"] = "gpu"

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
        return " + ".join([base, *parts])

    @property
    def short_label(self) -> str:
        """A table-width label: 'ZeRO-3 +CPU opt,param', 'FSDP2 full'."""
        base = _KIND_LABEL[self.kind].replace(" shard-grad-op", " grad-op").replace(" full shard", " full")
        if self.is_fsdp:
            base = base.replace("FSDP", f"FSDP{self.fsdp_version}")
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


_FSDP_KINDS = {"FULL_SHARD": "fsdp_full", "SHARD_GRAD_OP": "fsdp_grad_op", "HYBRID_SHARD": "fsdp_hybrid",
               "HYBRID_SHARD_ZERO2": "fsdp_hybrid", "NO_SHARD": "ddp"}


def strategy_from_effective(effective: EffectiveConfig) -> Strategy | None:
    """The strategy a config asks for, from its effective values; None when it cannot be told (no files, a
    TPU/CPU/MPS type, a ZeRO stage DeepSpeed would not read, a DeepSpeed JSON that was not found).

    Nothing is parsed here: the ZeRO stage ("auto" -> 2 under accelerate), the offload devices, the FSDP version
    (either `fsdp_config` spelling) and sharding, and an unquoted `NO` are what `accelwiz/effective.py` reads.
    """
    if effective.json_alone:
        return _deepspeed_strategy(effective, gpus_per_node=1, nodes=1)
    kind = effective.distributed_type.value
    if not effective.has_yaml:
        return None
    if kind is None and not effective.distributed_type.is_written:
        kind = "NO"  # a YAML without distributed_type (accelerate refuses it; the schema rules report it)
    machines, processes = effective.num_machines.value, effective.num_processes.value
    nodes = machines if machines is not None and machines >= 1 else 1
    # num_processes -1 or absent: `accelerate launch` needs --num_processes; plan for one process per machine
    total = processes if processes is not None and processes >= 1 else nodes
    gpus_per_node = max(1, total // nodes)
    if kind == "DEEPSPEED":
        return _deepspeed_strategy(effective, gpus_per_node=gpus_per_node, nodes=nodes)
    if kind == "FSDP":
        sharded: Any = _FSDP_KINDS.get(effective.fsdp_sharding.value or "FULL_SHARD", "fsdp_full")
        if sharded == "ddp" and gpus_per_node * nodes == 1:
            sharded = "single"
        offload: Any = "cpu" if effective.fsdp_offload_params.value else "none"
        version = 2 if effective.fsdp_version.value == 2 else 1
        return Strategy(sharded, offload_optimizer=offload, offload_param=offload, gpus_per_node=gpus_per_node,
                        nodes=nodes, fsdp_version=version,
                        fsdp_use_orig_params=effective.fsdp_use_orig_params.value is not False)
    if kind == "NO":  # the simple launcher starts one process, whatever num_processes says (AW112)
        return Strategy("single")
    if kind == "MULTI_GPU":
        return Strategy("ddp" if gpus_per_node * nodes > 1 else "single", gpus_per_node=gpus_per_node, nodes=nodes)
    return None  # TPU, XLA, CPU, MPS...: no GPU memory plan


# the keys the HF Trainer (integrations/deepspeed.py `trainer_config_finalize`) and accelerate
# (`Accelerator._prepare_deepspeed`) fill from the model's hidden size where the JSON says "auto"
_HIDDEN_SIZE_AUTO = ("zero_reduce_bucket_size", "zero3_prefetch_bucket_size", "zero3_param_persistence_threshold")


def _deepspeed_strategy(effective: EffectiveConfig, *, gpus_per_node: int, nodes: int) -> Strategy | None:
    stage = effective.zero_stage.value
    if stage not in (0, 1, 2, 3):
        return None
    optimizer: Any = effective.offload_optimizer.value or "none"
    param: Any = effective.offload_param.value or "none"
    world = gpus_per_node * nodes
    kind: Any = {0: "ddp" if world > 1 else "single", 1: "zero1", 2: "zero2", 3: "zero3"}[stage]
    if kind in ("single", "ddp"):
        optimizer = "none"
    if kind != "zero3":
        param = "none"  # DeepSpeed ignores parameter offload below stage 3 (AW2xx reports it)
        optimizer = "cpu" if optimizer == "nvme" else optimizer  # and treats NVMe optimizer offload as CPU
    coordinator: dict[str, Any] = {}
    names = ("zero3_max_live_parameters", "zero3_max_reuse_distance", "zero3_prefetch_bucket_size",
             "zero3_param_persistence_threshold") if kind == "zero3" else ()
    for name in (*names, "zero_reduce_bucket_size"):  # as written and readable, else DeepSpeed's defaults
        value = getattr(effective, name)
        if isinstance(value.value, int) and value.value >= 0:
            coordinator[name] = value.value
        elif value.written == "auto" and name in _HIDDEN_SIZE_AUTO:  # the Trainer/accelerate fill it
            coordinator[name] = "auto"
    for name in ("bf16_master_weights_and_grads", "bf16_optimizer_states"):
        if kind != "single" and getattr(effective, name).value is True:  # ZeRO stages 1-3 only (config.py)
            coordinator[name] = True
    return Strategy(kind, offload_optimizer=optimizer, offload_param=param, gpus_per_node=gpus_per_node,
                    nodes=nodes, **coordinator)


def training_precision(effective: EffectiveConfig) -> str | None:
    """'fp32' when the config trains without 16-bit compute, 'mixed' when it asks for fp16/bf16/fp8, None when
    the files leave it to the script or the Trainer (accelerate's default, or "auto" in a DeepSpeed JSON)."""
    precision = effective.mixed_precision
    if precision.value in ("fp16", "bf16", "fp8"):
        return "mixed"
    if precision.value == "no" and precision.source in ("yaml", "json", "deepspeed default", "trainer"):
        return "fp32"
    return None


_KIND_NAMES = {
    "single": "single",
    "ddp": "ddp",
    "zero0": "ddp",
    "zero1": "zero1",
    "zero2": "zero2",
    "zero3": "zero3",
    "fsdp": "fsdp_full",
    "fsdp_full": "fsdp_full",
    "fsdp_full_shard": "fsdp_full",
    "fsdp_grad_op": "fsdp_grad_op",
    "fsdp_shard_grad_op": "fsdp_grad_op",
    "fsdp_hybrid": "fsdp_hybrid",
    "fsdp_hybrid_shard": "fsdp_hybrid",
}


def strategy_from_options(
    kind: str,
    *,
    gpus_per_node: int,
    nodes: int = 1,
    offload_optimizer: str = "none",
    offload_param: str = "none",
    fsdp_version: int = 2,
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
    if resolved in ("single", "ddp"):
        resolved = "single" if gpus_per_node * nodes == 1 else "ddp"
        if offload_optimizer != "none" or offload_param != "none":
            raise UsageError("offload needs ZeRO or FSDP", hint="pass --strategy zero2 (optimizer) or zero3")
    if offload_param != "none" and resolved not in ("zero3", "fsdp_full", "fsdp_hybrid", "fsdp_grad_op"):
        raise UsageError(
            f"parameter offload needs ZeRO-3 or FSDP (strategy is {resolved})", hint="pass --strategy zero3"
        )
    if resolved.startswith("fsdp"):
        if "nvme" in (offload_optimizer, offload_param):
            raise UsageError("FSDP cannot offload to NVMe", hint="use --strategy zero3 for NVMe offload")
        if offload_param == "none" and offload_optimizer != "none":  # was silently made a parameter offload
            raise UsageError(
                "FSDP has no optimizer-only offload: accelerate's fsdp_offload_params (torch's CPUOffload"
                "(offload_params=True)) moves parameters, gradients and the optimizer step together",
                hint="pass --offload-param cpu as well, or --strategy zero2 for optimizer-only offload",
            )
        offload_optimizer = offload_param  # fsdp_offload_params moves parameters, gradients and optimizer
    elif resolved in ("zero1", "zero2") and offload_optimizer == "nvme":
        raise UsageError(
            "NVMe optimizer offload needs ZeRO-3 (DeepSpeed treats it as CPU at stage 1/2)",
            hint="pass --strategy zero3 or --offload-optimizer cpu",
        )
    return Strategy(
        resolved,
        offload_optimizer=offload_optimizer,
        offload_param=offload_param,  # type: ignore[arg-type]
        gpus_per_node=gpus_per_node,
        nodes=nodes,
        fsdp_version=fsdp_version,
    )
