"""AW809 against transformers and TRL: a process launched with `distributed_type: 'NO'` sees every GPU of the
machine, or the `gpu_ids` accelerate's simple launcher exports as CUDA_VISIBLE_DEVICES
(accelerate/utils/launch.py, prepare_simple_launcher_cmd_env). No GPU is here, so the subprocess gives torch that
device count after the imports and builds the real DPOConfig: transformers derives `n_gpu`
(TrainingArguments._setup_devices), and both trainers refuse `args.n_gpu > 1` right after Trainer.__init__."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from pathlib import Path

from accelwiz.config.training_args import parse_argv
from accelwiz.config.trl_arguments import with_trl
from accelwiz.probe.profiles import load_system
from tests.rules.helpers import codes

N_GPU = """
import json, os, sys, warnings
warnings.simplefilter("ignore")
import torch
from trl import DPOConfig

found = []
for count, yaml_cpu, trainer_cpu in json.load(open(sys.argv[1])):
    torch.cuda.is_available = lambda: True  # a CUDA machine whose launcher left `count` devices visible
    torch.cuda.device_count = lambda count=count: count
    torch.cuda.set_device = lambda device: None
    os.environ["ACCELERATE_USE_CPU"] = str(yaml_cpu)  # what the YAML's use_cpu exports
    found.append(DPOConfig(output_dir=sys.argv[3], report_to="none", bf16=False, use_cpu=trainer_cpu).n_gpu)
json.dump(found, open(sys.argv[2], "w"))
"""


def test_both_trainers_refuse_more_than_one_gpu_per_process() -> None:
    from trl import DPOTrainer, GRPOTrainer

    for trainer in (DPOTrainer, GRPOTrainer):
        assert "if args.n_gpu > 1:" in inspect.getsource(trainer.__init__)


def test_aw809_fires_exactly_where_transformers_gives_one_process_several_gpus(tmp_path: Path) -> None:
    yamls = {"all": "", "one": "gpu_ids: '0'\n", "two": "gpu_ids: 0,1\n", "cpu": "use_cpu: true\n"}
    cases = [(gpus, name, trainer_cpu) for gpus in (1, 2, 8) for name in yamls for trainer_cpu in (False, True)
             if not (name == "two" and gpus < 2)]
    visible = [(len(yamls[name].split(",")) if "gpu_ids" in yamls[name] else gpus, name == "cpu", trainer_cpu)
               for gpus, name, trainer_cpu in cases]
    given, out, script = tmp_path / "cases.json", tmp_path / "n_gpu.json", tmp_path / "n_gpu.py"
    given.write_text(json.dumps(visible))
    script.write_text(N_GPU)
    subprocess.run([sys.executable, str(script), str(given), str(out), str(tmp_path / "out")], check=True,
                   capture_output=True, timeout=300)
    n_gpu = json.loads(out.read_text())
    for kind in ("dpo", "grpo"):
        for (gpus, name, trainer_cpu), count in zip(cases, n_gpu, strict=True):
            argv = ["--use_cpu"] if trainer_cpu else []
            args = with_trl(parse_argv(argv), kind, None, argv)
            yaml = tmp_path / f"{name}.yaml"
            yaml.write_text("distributed_type: 'NO'\n" + yamls[name])
            fired = codes(yaml, select=("AW809",), training_args=args, system=load_system(f"{gpus}xH100-80GB"))
            assert ("AW809" in fired) == (count > 1), (kind, gpus, name, trainer_cpu, count)
    assert sorted(set(n_gpu)) == [0, 1, 2, 8]
    # a distributed launch gives each process one GPU (n_gpu 1): nothing to refuse
    yaml.write_text("distributed_type: MULTI_GPU\nnum_processes: 8\n")
    args = with_trl(parse_argv([]), "dpo", None, [])
    assert not codes(yaml, select=("AW809",), training_args=args, system=load_system("8xH100-80GB"))
