"""`accelwiz migrate` and `accelerate to-fsdp2` (accelerate's own command, run for real on a copy) side by side on
every FSDP1 config of the corpus; renders docs/migrate.md.

Regenerate: `ACCELWIZ_CORPUS=../shared/corpus python -m tests.migrate.side_by_side > docs/migrate.md`
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

# FSDP1 options accelerate 1.15's FSDP2 plugin does not read (or refuses); a prefix-less spelling counts too
FSDP1_ONLY = {"sharding_strategy", "backward_prefetch", "backward_prefetch_policy", "forward_prefetch",
              "use_orig_params", "sync_module_states"}
STRATEGY_WORDS = {"FULL_SHARD", "SHARD_GRAD_OP", "NO_SHARD", "HYBRID_SHARD", "HYBRID_SHARD_ZERO2"}


@dataclass(frozen=True)
class Row:
    name: str
    differences: tuple[str, ...]  # 'key: to-fsdp2 X, migrate Y'
    fsdp1_left: tuple[str, ...]  # FSDP1 keys or values to-fsdp2 leaves in its FSDP2 output
    fsdp1_left_by_migrate: tuple[str, ...]  # the same for migrate's output
    comments: int  # comment lines in the source
    kept_by_accelerate: int
    kept_by_migrate: int
    errors_accelerate: tuple[str, ...]  # check's error codes on each output
    errors_migrate: tuple[str, ...]


def fsdp1_configs(corpus: Path | None, folders: tuple[str, ...] = ("real",)) -> list[Path]:
    """The corpus's FSDP1 configs: FSDP with an fsdp_config whose version is not 2."""
    from tests.conftest import corpus_accelerate_yamls

    found = []
    for path, document in corpus_accelerate_yamls(corpus, folders):
        section = document.get("fsdp_config")
        if document.get("distributed_type") == "FSDP" and isinstance(section, dict) and \
                str(section.get("fsdp_version", section.get("version", 1))).strip() != "2":
            found.append(path)
    return found


def run_to_fsdp2(source: Path, output: Path) -> None:
    """`accelerate to-fsdp2 --config_file SOURCE --output_file OUTPUT`: the command's own parser and function."""
    from accelerate.commands.to_fsdp2 import to_fsdp2_command, to_fsdp2_command_parser

    to_fsdp2_command(to_fsdp2_command_parser().parse_args(["--config_file", str(source),
                                                           "--output_file", str(output)]))


def run_migrate(source: Path, output: Path) -> None:
    from typer.testing import CliRunner

    from accelwiz.cli import app

    result = CliRunner().invoke(app, ["migrate", str(source), "-o", str(output)], catch_exceptions=False)
    if result.exit_code not in (0, 1):  # 1: the result still has findings (reported in the table)
        raise RuntimeError(f"accelwiz migrate {source.name}: exit {result.exit_code}: {result.stderr}")


def _section(path: Path) -> dict[str, Any]:
    return (yaml.safe_load(path.read_text()) or {}).get("fsdp_config") or {}


def _short(key: Any) -> str:
    return str(key).removeprefix("fsdp_")


def _errors(path: Path) -> tuple[str, ...]:
    from accelwiz.rules.diagnostic import Severity
    from accelwiz.rules.engine import check_paths
    from accelwiz.rules.registry import select_rules

    found = check_paths([path], select_rules()).diagnostics
    return tuple(sorted({d.code for d in found if d.severity is Severity.ERROR}))


def _comments(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip().startswith("#")]


def compare(path: Path) -> Row:
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / path.name
        shutil.copy(path, copy)
        theirs_path, ours_path = Path(folder) / "to_fsdp2.yaml", Path(folder) / "migrate.yaml"
        run_to_fsdp2(copy, theirs_path)
        run_migrate(copy, ours_path)
        theirs = {_short(k): v for k, v in _section(theirs_path).items()}
        ours = {_short(k): v for k, v in _section(ours_path).items()}
        differences = tuple(f"{key}: {_cell(theirs, key)} / {_cell(ours, key)}"
                            for key in dict.fromkeys([*theirs, *ours]) if _cell(theirs, key) != _cell(ours, key))
        comments = _comments(path.read_text())
        return Row(path.name, differences, fsdp1_left(theirs), fsdp1_left(ours), len(comments),
                   sum(c in theirs_path.read_text() for c in comments),
                   sum(c in ours_path.read_text() for c in comments),
                   _errors(theirs_path), _errors(ours_path))


def fsdp1_left(section: dict[str, Any]) -> tuple[str, ...]:
    """FSDP1 options and values in an FSDP2 section: FSDP1-only keys, a strategy (name or number) where FSDP2
    wants a boolean, and LOCAL_STATE_DICT, which the FSDP2 plugin refuses."""
    found = [key for key in section if key in FSDP1_ONLY]
    found += [f"{key}: {value!r}" for key, value in section.items()
              if key == "reshard_after_forward" and not isinstance(value, bool)]
    found += [f"{key}: {value}" for key, value in section.items()
              if key == "state_dict_type" and str(value).upper() == "LOCAL_STATE_DICT"]
    return tuple(found)


def _cell(section: dict[str, Any], key: str) -> str:
    return "(absent)" if key not in section else f"`{section[key]!r}`"


def render(rows: list[Row]) -> str:
    leaking = [r for r in rows if r.fsdp1_left]
    lines = [
        "# `accelwiz migrate` next to `accelerate to-fsdp2`",
        "",
        "<!-- generated by tests/migrate/side_by_side.py; tests/migrate/test_side_by_side.py keeps it current -->",
        "",
        f"Every FSDP1 config of the corpus ({len(rows)} files in ../shared/corpus/real) converted by both: "
        "`accelerate to-fsdp2 --config_file COPY --output_file OUT` (accelerate 1.15, the command itself, run on a "
        "copy) and `accelwiz migrate COPY -o OUT`. `fsdp_` prefixes are dropped in the table; a cell is "
        "`to-fsdp2 / migrate`.",
        "",
        f"- to-fsdp2 leaves FSDP1 keys or values in its FSDP2 output on {len(leaking)} of {len(rows)} files "
        f"({', '.join(sorted({item.split(':')[0] for r in leaking for item in r.fsdp1_left}))}): it carries every "
        "key it has no entry for unchanged, and maps only strategy names, not numbers; migrate on "
        f"{sum(bool(r.fsdp1_left_by_migrate) for r in rows)} files.",
        f"- comments: to-fsdp2 re-dumps the YAML with PyYAML (sorted, comments dropped: "
        f"{sum(r.kept_by_accelerate for r in rows)} of {sum(r.comments for r in rows)} comment lines kept); "
        f"migrate edits through ruamel's round trip ({sum(r.kept_by_migrate for r in rows)} kept).",
        f"- `accelwiz check` errors on the outputs: to-fsdp2 {sum(bool(r.errors_accelerate) for r in rows)} files, "
        f"migrate {sum(bool(r.errors_migrate) for r in rows)} files.",
        "",
        "| config | differing keys (to-fsdp2 / migrate) | FSDP1 left by to-fsdp2 | comments kept (to-fsdp2 / "
        "migrate of source) | check errors (to-fsdp2 / migrate) |",
        "|---|---|---|---|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row.name} | {'<br>'.join(row.differences) or 'none'} | {', '.join(row.fsdp1_left) or 'none'} | "
            f"{row.kept_by_accelerate} / {row.kept_by_migrate} of {row.comments} | "
            f"{', '.join(row.errors_accelerate) or 'none'} / {', '.join(row.errors_migrate) or 'none'} |")
    lines += [
        "",
        "What the differing keys mean: to-fsdp2 drops `backward_prefetch`, `sync_module_states`, `use_orig_params` "
        "and `forward_prefetch` with a log line and maps the strategy name to `reshard_after_forward`; migrate "
        "does the same mapping and, beside the removals, says what FSDP2 does instead (implicit prefetching, "
        "DTensor parameters, rank-0 broadcast with `cpu_ram_efficient_loading`), and that NO_SHARD and the "
        "HYBRID strategies have no FSDP2 meaning without `parallelism_config`. Neither carries an option FSDP2 "
        "has no meaning for into the output, except where to-fsdp2 has no entry for the key (the column above).",
        "",
        *releases_section(),
    ]
    return "\n".join(lines)


def releases_section() -> list[str]:
    """`--to-accelerate VERSION`, from the table in accelwiz/migrate/accelerate_releases.py."""
    from accelwiz.migrate.accelerate_releases import CHANGES, CHECKED_AGAINST, shown

    lines = [
        "## `accelwiz migrate FILE --to-accelerate VERSION`",
        "",
        "Rewrites the Accelerate YAML keys whose form changed between accelerate releases, for the release the "
        "run will use, and nothing else (no FSDP2 migration, no DeepSpeed keys). Each change was read in "
        "accelerate's repository (the release tag that first contains it, and its pull request). A rewrite does "
        "exactly the conversion accelerate's own loader (`ClusterConfig.process_config`) performs, so the file "
        "means the same to accelerate before and after (tests/migrate/test_accelerate_releases.py loads both with "
        f"accelerate {shown(CHECKED_AGAINST)}'s `ClusterConfig.from_yaml_file`), or removes a key the loader now "
        "refuses; a note changes nothing and says what the run now does. A change the target release does "
        "not read yet is kept, with a note; a target newer than "
        f"{shown(CHECKED_AGAINST)} is told that later changes are not known.",
        "",
        "| key | becomes | from release | source |",
        "|---|---|---|---|",
    ]
    lines += [f"| `{c.key}` | {c.becomes} | {shown(c.since)} | {c.source} |" for c in CHANGES]
    lines += [
        "",
        "Details: a written `mixed_precision` wins over `fp16` (which is then only removed), and any non-empty "
        "`fp16` value, even `'no'`, means fp16 to accelerate; a top-level `dynamo_backend` replaces a written "
        "`dynamo_config`; an unquoted `dynamo_backend: NO` is a boolean to YAML 1.1 readers (accelerate's PyYAML), "
        "not a backend name, and is left for `check`; "
        "`ipex_config` is refused by accelerate 1.13 and later (\"had unknown keys\"), and with `ipex: true` the "
        "note says that accelerate no longer applies `ipex.optimize`.",
        "",
        "Left out, and why:",
        "",
        "- `fsdp_sharding_strategy` -> `fsdp_reshard_after_forward` under FSDP1 (accelerate 1.6.0, PR #3394 "
        "deprecates the former with a warning): under `accelerate launch` the launcher always exports "
        "`FSDP_SHARDING_STRATEGY` (default FULL_SHARD) and the Accelerator uses `sharding_strategy or "
        "reshard_after_forward`, so an FSDP1 config that writes SHARD_GRAD_OP under the new name runs FULL_SHARD "
        "(test_why_fsdp1_sharding_strategy_is_not_renamed shows it with accelerate's own plugin). The way off the "
        "deprecated key is FSDP2: plain `accelwiz migrate`.",
        "- numeric `fsdp_sharding_strategy` (1-5): accelerate 1.15 still reads the numbers under FSDP1, with the "
        "same meaning; plain `accelwiz migrate` maps them for FSDP2.",
        "- `gradient_clipping: \"auto\"` itself (accelerate#3807): PR #2791, which would have made `accelerate "
        "config` write 0.0 for \"no clipping\", was closed unmerged, and no release changed how \"auto\" is "
        "filled (1.0 since PR #405); what changed is that 0.30.0 makes an unset value \"auto\" (the note above) "
        "and that DeepSpeed's own default is 1.0 since 0.19.3. `check` reports it (AW228).",
        "- `use_cpu`: no change of meaning in `config_args.py`'s history; nothing to rewrite.",
        "",
    ]
    return lines


def main() -> None:
    import os

    corpus = Path(os.environ.get("ACCELWIZ_CORPUS", Path(__file__).resolve().parents[3] / "shared" / "corpus"))
    print(render([compare(path) for path in fsdp1_configs(corpus)]), end="")


if __name__ == "__main__":
    main()
