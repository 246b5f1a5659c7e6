"""`accelwiz probe` and `accelwiz env` end to end, in-process."""

from __future__ import annotations

import json
from pathlib import Path

from accelwiz.probe.model import MachineProfile
from accelwiz.probe.presets import PRESETS

SYSTEMS = Path(__file__).resolve().parent.parent / "fixtures" / "systems"


def test_probe_prints_tables_for_this_machine(cli):
    result = cli("probe")
    assert result.exit_code == 0
    for title in ("Machine", "Host", "Packages"):
        assert title in result.stdout
    assert "deepspeed" in result.stdout


def test_probe_json_is_a_valid_profile_on_stdout(cli, tmp_path):
    result = cli("probe", "--json", "--disk", str(tmp_path))
    assert result.exit_code == 0
    profile = MachineProfile.model_validate_json(result.stdout)
    assert profile.source == "probe" and profile.host.disk.path == str(tmp_path)
    assert result.stderr == ""


def test_probe_save_writes_a_profile_that_check_can_use(cli, tmp_path, write):
    target = tmp_path / "node.json"
    result = cli("probe", "--save", str(target), "--json")
    assert result.exit_code == 0 and "saved" in result.stderr
    assert json.loads(target.read_text()) == json.loads(result.stdout)
    config = write("a.yaml", "distributed_type: 'NO'\n")
    assert cli("check", str(config), "--system", str(target)).exit_code == 0


def test_probe_save_into_a_missing_folder_fails_cleanly(cli, tmp_path):
    result = cli("probe", "--save", str(tmp_path / "no" / "node.json"))
    assert result.exit_code == 2 and result.stderr.startswith("error: cannot write")


def test_list_presets_names_every_preset(cli):
    result = cli("probe", "--list-presets")
    assert result.exit_code == 0
    assert all(preset.name in result.stdout for preset in PRESETS)


def test_system_shows_a_preset_or_a_file_instead_of_probing(cli):
    preset = cli("probe", "--system", "8xV100-32GB")
    assert preset.exit_code == 0 and "NVLink partial" in preset.stdout and "emul" in preset.stdout
    saved = cli("probe", "--system", str(SYSTEMS / "2x8xH100.json"), "--json")
    assert MachineProfile.model_validate_json(saved.stdout).num_machines == 2


def test_unknown_system_is_a_usage_error(cli):
    result = cli("probe", "--system", "9xH100")
    assert result.exit_code == 2 and "error:" in result.stderr and "hint:" in result.stderr


def test_env_reports_versions_machine_and_each_config(cli, write):
    ds = write("ds.json", '{"bf16": {"enabled": true}, "zero_optimization": {"stage": 3}}')
    yaml = write("accelerate.yaml", f"distributed_type: DEEPSPEED\nnum_processes: 2\n"
                                    f"deepspeed_config:\n  deepspeed_config_file: {ds}\n")
    fsdp = write("fsdp.yaml", "distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_version: 2\n")
    result = cli("env", str(yaml), str(fsdp))
    assert result.exit_code == 0
    text = result.stdout
    assert text.startswith("## accelwiz env") and "| accelwiz | 0.1.0 |" in text
    assert "| deepspeed |" in text and "### Machine" in text
    assert f"#### {yaml} + {ds}" in text and "| mixed precision | bf16 (DeepSpeed JSON) |" in text
    assert "| ZeRO stage | 3 (DeepSpeed JSON) |" in text and "| FSDP version | 2 (YAML) |" in text
    assert text.count("| `accelwiz check` |") == 2


def test_env_without_configs_and_with_an_unreadable_one(cli, tmp_path):
    plain = cli("env")
    assert plain.exit_code == 0 and "### Configs" not in plain.stdout
    missing = cli("env", str(tmp_path / "missing.yaml"))
    assert missing.exit_code == 0 and "could not read" in missing.stdout


def test_env_report_lists_every_gpu_with_its_uuid_and_the_p2p_matrix():
    from accelwiz.cli.env_report import env_report
    from accelwiz.probe.profiles import load_system

    text = env_report(load_system(str(SYSTEMS / "8xV100-32GB.json")))
    for index in range(8):
        assert f"| {index} | Tesla V100-SXM2-32GB | 31.7 GiB |" in text
        assert f"GPU-{index:08x}-1111" in text
    assert "| GPU7 | no | no | no | NVLink | NVLink | NVLink | NVLink | X |" in text


def test_probe_imports_no_heavy_library():
    """The probe reads NVML, psutil and package metadata; importing torch alone would cost seconds."""
    import subprocess
    import sys

    code = ("import sys\nfrom typer.testing import CliRunner\nfrom accelwiz.cli import app\n"
            "assert CliRunner().invoke(app, ['probe', '--json']).exit_code == 0\n"
            "heavy = ('torch', 'deepspeed', 'accelerate', 'transformers')\n"
            "print(sorted(m for m in heavy if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
