"""Every rule's documentation `## Example` is a test: run through `accelwiz check`, it fires that rule; and where the
"Use instead" gives a file, that file is clean of it.

How an example is written (the convention `accelwiz rule CODE` readers see, and this test reads):
- each fenced ```yaml block is an Accelerate YAML, each ```json block a DeepSpeed JSON; a YAML block whose first
  line is a comment naming a file (`# configs/accelerate.yaml`, `# accelerate.plan.yaml`) is written under that
  name (a `.plan.yaml` name makes it a plan file). A JSON is written under the name after its fence's language
  (```json configs/ds.json), else the name the YAML gives in `deepspeed_config_file`, else `ds_config.json`.
  Files are written to an empty directory, which is the working directory of the check (where `accelerate
  launch` would run);
- the command that shows the finding is a `# accelwiz check [OPTIONS] [-- TRAINER ARGS]` comment line in a YAML
  block, or an `accelwiz check ...` line in a ```console block; its options (--system, --model, --micro-batch, ...)
  are passed as written, file names in it are ignored (the blocks are the files). A `--system FILE.json` that
  is not beside the example is a profile from tests/fixtures/systems (written with `accelwiz probe --save`);
- "Use instead:" followed by fenced blocks gives the fixed files: each replaces the example's block for the same
  file (same name, or same kind when unnamed), and the same command must not report the rule. A "Use instead"
  in prose is read, not run.

This replaces a guard that passed whenever a rule's code appeared in some test file.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from accelwiz.rules.registry import load_all_rules

RULES = load_all_rules()
SYSTEMS = Path(__file__).resolve().parent.parent / "fixtures" / "systems"
BLOCK = re.compile(r"```(\w+)([^\n]*)\n(.*?)```", re.S)
COMMAND = re.compile(r"^\s*(?:#\s*|\$\s*)?((?:[A-Z_]+=\S*\s+)*)accelwiz check\b(.*)$", re.M)
# the environment a check runs in, as the rules that read it see it (AW617): cleared, then what the example sets
CHECK_ENVIRONMENT = ("CUDA_VISIBLE_DEVICES", "SLURM_STEP_GPUS", "SLURM_JOB_GPUS")
NAME_COMMENT = re.compile(r"^#\s*(\S+\.(?:ya?ml|json))\s*(?:[:(,].*)?$")


@dataclass
class Example:
    blocks: list[tuple[str, str, str]]  # (kind, name from the fence or "", text): kind is yaml, json or console
    fixed: list[tuple[str, str, str]] = field(default_factory=list)

    @property
    def options(self) -> list[str]:
        """The check options the example names (file names dropped), including `-- ARGS`."""
        for _, _, text in self.blocks:
            match = COMMAND.search(text)
            if match:
                words = shlex.split(match.group(2), comments=False)
                if "--" in words:
                    cut = words.index("--")
                    head, tail = words[:cut], words[cut:]
                else:
                    head, tail = words, []
                return [*_drop_file_names(head), *tail]
        return []


    @property
    def environment(self) -> dict[str, str]:
        """`NAME=value` assignments before `accelwiz check` in the example's command."""
        for _, _, text in self.blocks:
            match = COMMAND.search(text)
            if match:
                return dict(word.split("=", 1) for word in shlex.split(match.group(1)))
        return {}


def _set_environment(monkeypatch, example: Example) -> None:
    for name in CHECK_ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)
    for name, value in example.environment.items():
        monkeypatch.setenv(name, value)


def _drop_file_names(words: list[str]) -> list[str]:
    kept, takes_value = [], False
    for word in words:
        if takes_value:
            kept.append(word)
            takes_value = False
        elif word.startswith("-"):
            kept.append(word)
            takes_value = "=" not in word and word not in FLAGS_WITHOUT_VALUE
        # a bare word that is not an option's value is a file name: the blocks are the files
    return kept


FLAGS_WITHOUT_VALUE = {"--gradient-checkpointing", "--lora", "--qlora", "--strict", "--explain", "--trl", "--fix",
                       "--diff", "--unsafe-fixes"}


def example_of(doc: str) -> Example | None:
    match = re.search(r"## Example\s*\n(.*?)(?=\n## |\Z)", doc, re.S)
    if match is None:
        return None
    section = match.group(1)
    before, _, after = section.partition("Use instead")
    return Example([(k, n.strip(), t) for k, n, t in BLOCK.findall(before)],
                   [(k, n.strip(), t) for k, n, t in BLOCK.findall(after)])


def write_files(directory: Path, blocks: list[tuple[str, str, str]]) -> list[Path]:
    """The example's files, named as the convention above says; plan files are found by `check` beside the YAML."""
    yamls = [t for k, _, t in blocks if k == "yaml"]
    jsons = [(n, t) for k, n, t in blocks if k == "json"]
    written: list[Path] = []
    json_name = "ds_config.json"
    for text in yamls:
        first = text.lstrip().splitlines()[0] if text.strip() else ""
        named = NAME_COMMENT.match(first)
        name = named.group(1) if named else "accelerate.yaml"
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if not name.endswith(".plan.yaml"):
            written.append(path)
        file_line = re.search(r"^\s*deepspeed_config_file:\s*([^\s#]+)", text, re.M)
        if file_line:
            json_name = file_line.group(1).strip("'\"")
    for name, text in jsons:
        path = directory / (name or json_name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if not any(p.resolve() == path.resolve() for p in written):
            written.append(path)
    return written


def _file_of(block: tuple[str, str, str]) -> str:
    """Which file a block is, so that a "Use instead" block replaces the example block it fixes."""
    kind, name, text = block
    if kind == "yaml":
        first = text.lstrip().splitlines()[0] if text.strip() else ""
        named = NAME_COMMENT.match(first)
        return named.group(1) if named else "accelerate.yaml"
    return f"{kind}:{name}"


def _system_profiles(options: list[str], directory: Path) -> list[str]:
    """`--system NAME.json` not written beside the example: the profile of that name in tests/fixtures/systems."""
    resolved = list(options)
    for i, word in enumerate(resolved[:-1]):
        if word == "--system" and resolved[i + 1].endswith(".json") and not (directory / resolved[i + 1]).exists():
            resolved[i + 1] = str(SYSTEMS / resolved[i + 1])
    return resolved


def reported(cli, directory: Path, blocks: list[tuple[str, str, str]], options: list[str], code: str) -> list[dict]:
    files = write_files(directory, blocks)
    assert files or "--" in options, "the example has no file to check"
    cut = options.index("--") if "--" in options else len(options)
    args = ["check", "--select", code, "--format", "json", *_system_profiles(options[:cut], directory),
            *(str(f.relative_to(directory)) for f in files), *options[cut:]]
    result = cli(*args)
    assert result.exit_code in (0, 1), f"accelwiz {shlex.join(args)}: exit {result.exit_code}\n{result.stderr}"
    return [d for d in json.loads(result.stdout or "[]") if d["code"] == code]


EXAMPLES = {code: example_of(rule.doc) for code, rule in RULES.items()}


@pytest.mark.parametrize("code", sorted(RULES))
def test_example_fires_its_rule(code, cli, tmp_path, monkeypatch):
    example = EXAMPLES[code]
    assert example is not None and example.blocks, f"{code}: the docstring has no `## Example` with a code block"
    monkeypatch.chdir(tmp_path)
    _set_environment(monkeypatch, example)
    found = reported(cli, tmp_path, example.blocks, example.options, code)
    assert found, f"{code}'s `## Example` does not fire {code} (options: {example.options})"


FIXED = sorted(code for code, example in EXAMPLES.items() if example is not None and example.fixed)


@pytest.mark.parametrize("code", FIXED)
def test_use_instead_is_clean(code, cli, tmp_path, monkeypatch):
    example = EXAMPLES[code]
    replaced = {_file_of(block) for block in example.fixed}
    blocks = [b for b in example.blocks if _file_of(b) not in replaced] + example.fixed
    monkeypatch.chdir(tmp_path)
    _set_environment(monkeypatch, example)
    found = reported(cli, tmp_path, blocks, example.options, code)
    assert not found, f"{code}'s \"Use instead\" still reports {code}: {[d['message'] for d in found]}"


def test_the_convention_reads_a_command_and_names():
    """The parser itself: the command's options without file names, and files named by a first-line comment."""
    example = example_of("## Example\n```yaml\n# configs/a.yaml\n# accelwiz check a.yaml --system 8xV100-32GB "
                         "--model gpt2 --lora -- --bf16\nx: 1\n```\nUse instead:\n```yaml\nx: 2\n```\n")
    assert example.options == ["--system", "8xV100-32GB", "--model", "gpt2", "--lora", "--", "--bf16"]
    assert example.fixed == [("yaml", "", "x: 2\n")]
    assert NAME_COMMENT.match("# configs/a.yaml").group(1) == "configs/a.yaml"
    assert NAME_COMMENT.match("# accelwiz check a.yaml") is None
    with_environment = example_of("## Example\n```yaml\n# CUDA_VISIBLE_DEVICES=0,1 accelwiz check a.yaml\nx: 1\n```\n")
    assert with_environment.environment == {"CUDA_VISIBLE_DEVICES": "0,1"} and with_environment.options == []
