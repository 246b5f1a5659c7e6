"""Issue 28: one owner of "the stack". A `--system` profile that lists its packages (a real `probe --save`) is the
stack the run trains with for the resolution's `stack` field (source "system profile") as for the rules
(rules/installed.py): both read resolution/stack.py `package_version`."""

from __future__ import annotations

import json
import re
from pathlib import Path

from accelwiz.probe.profiles import load_system
from accelwiz.resolution.stack import SYSTEM_PROFILE, resolved_stack, with_profile_stack
from accelwiz.rules.context import CheckContext
from accelwiz.rules.installed import stack_version

V100 = Path(__file__).resolve().parent.parent / "fixtures" / "systems" / "8xV100-32GB.json"


def _profile(tmp_path: Path, **versions: str | None) -> Path:
    """The 8 x V100 probe (torch 2.5.1+cu121, accelerate 1.8.1, transformers 4.53.0) with other versions."""
    data = json.loads(V100.read_text())
    data["packages"] = {**data["packages"], **versions}
    path = tmp_path / "node.json"
    path.write_text(json.dumps(data))
    return path


def test_the_resolution_and_the_rules_read_the_same_profile_versions(tmp_path) -> None:
    profile = load_system(str(_profile(tmp_path, accelerate="0.28.0")))
    stack = resolved_stack(None, profile.packages)
    assert stack.source == SYSTEM_PROFILE
    assert (stack.value.accelerate, stack.value.torch, stack.value.transformers) == ((0, 28, 0), (2, 5, 1),
                                                                                     (4, 53, 0))
    context = CheckContext(system=profile)
    for name in ("accelerate", "torch", "transformers", "bitsandbytes"):
        read = stack_version(context, name)
        assert ".".join(map(str, getattr(stack.value, name))) == re.match(r"[\d.]+", read).group(0)
    # a flag names one library; the others stay the profile's
    flagged = resolved_stack(["accelerate==1.0.0"], profile.packages)
    assert flagged.value.accelerate == (1, 0, 0) and flagged.value.torch == (2, 5, 1)
    assert "the system profile's" in flagged.note


def test_a_profile_without_packages_leaves_the_installed_stack() -> None:
    assert with_profile_stack({"seq_len": 512}, {}) == {"seq_len": 512}
    assert with_profile_stack({"seq_len": 512}, None) == {"seq_len": 512}
    assert resolved_stack(None, {}).source == "installed"


def test_check_explain_shows_the_profiles_stack_and_its_memory_rules_use_it(tmp_path, cli) -> None:
    config = tmp_path / "a.yaml"
    config.write_text("distributed_type: 'NO'\nmixed_precision: bf16\nnum_processes: 1\n")
    node = _profile(tmp_path, transformers="4.46.3")
    shown = cli("check", str(config), "--explain", "--system", str(node), "--model", "llama-2-7b", "--lora")
    assert re.search(r"^  stack\s+transformers 4\.46\.3, bitsandbytes 0\.46\.0, accelerate 1\.8\.1, torch 2\.5\.1, "
                     r"deepspeed 0\.13\.1, peft \S+\s+system profile", shown.stdout, re.M), shown.stdout
    flagged = cli("check", str(config), "--explain", "--system", str(node), "--model", "llama-2-7b", "--lora",
                  "--stack", "torch==2.8.0")
    assert re.search(r"^  stack\s+transformers 4\.46\.3, .*torch 2\.8\.0, deepspeed 0\.13\.1, peft \S+\s+flag",
                     flagged.stdout, re.M)


def test_check_stack_flag_reaches_the_rules_and_the_memory_rules_alike(tmp_path, cli) -> None:
    config = tmp_path / "z3.yaml"
    config.write_text("distributed_type: DEEPSPEED\nnum_processes: 2\nmixed_precision: bf16\n"
                      "deepspeed_config:\n  zero_stage: 3\n  zero3_init_flag: false\n")
    argv = ["check", str(config), "--model", "llama-2-13b", "--lora", "--system", "2xRTX4090", "--seq-len", "512",
            "--gradient-checkpointing", "--select", "AW217,AW501"]
    today = cli(*argv)
    assert "is ignored for a transformers model by accelerate" in today.stdout and "AW501" not in today.stdout
    old = cli(*argv, "--stack", "accelerate==0.28.0")
    assert "accelerate 0.28.0 builds the model outside deepspeed.zero.Init" in old.stdout
    assert re.search(r"AW501 error estimated \S+ GiB per GPU with ZeRO-3 without zero.Init", old.stdout)
    node = _profile(tmp_path, accelerate="0.28.0")  # the same from a probe of the machine that trains
    profiled = cli(*[a if a != "2xRTX4090" else str(node) for a in argv[:-2]], "--select", "AW217")
    assert "accelerate 0.28.0 builds the model outside" in profiled.stdout
