"""Slow tier of the hostile-input fuzz: 10,000 mutants of the corpus (and of an answers YAML and a HF config.json)
through the commands that read them, then the named hostile cases of issue 21 (tests/hostile), written to
docs/hostile-input.md.

    PYTHONPATH=. python benchmarks/fuzz_hostile.py                 # 10,000 mutants, one command each
    PYTHONPATH=. python benchmarks/fuzz_hostile.py --count 500 --every-command
    PYTHONPATH=. python benchmarks/fuzz_hostile.py --round-two 20000   # issue 32: doctor wire, file flags

Each mutant goes through the command its seed picks (seed modulo the commands that read its kind of file), so
10,000 mutants cover every (case, command) pair; --every-command runs each mutant through all of them. A mutant
passes when the command ends (no hang, 60 s alarm) with exit code 0, 1 or 2, no uncaught exception, and no raw
control character in what it printed. The suite's tests/hostile/test_fuzz.py runs 200 of them.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from tests.hostile.mutants import CASES, laid_out, mutant, run_command  # noqa: E402

DOC = REPO / "docs" / "hostile-input.md"

# The named cases of issue 21, each with the test that tries it (tests/hostile/<file>::<test>).
NAMED = [
    ("`deepspeed_config_file` names /etc/shadow-like file (absolute, ../), text/github/json",
     "test_disclosure.py::test_a_named_file_that_is_not_a_config_is_named_never_printed"),
    ("`deepspeed_config_file` names the real /etc/passwd",
     "test_disclosure.py::test_the_real_etc_passwd_is_not_echoed"),
    ("`deepspeed_config_file` names a JSON with no DeepSpeed key",
     "test_disclosure.py::test_a_json_with_no_deepspeed_key_is_not_listed_key_by_key"),
    ("`deepspeed_config_file` names the YAML itself (check, convert)",
     "test_disclosure.py::test_the_yaml_naming_itself_is_refused_by_check_and_convert"),
    ("`deepspeed_config_file` names an unreadable file (check, convert)",
     "test_disclosure.py::test_an_unreadable_named_file_is_one_line_for_check_and_convert"),
    ("`init -o` with a newline in the name",
     "test_disclosure.py::test_init_output_name_with_a_newline_stays_in_the_comment"),
    ("escape sequence in a JSON key and in main_process_ip (text, github, json)",
     "test_escapes.py::test_escape_in_a_json_key_and_in_main_process_ip"),
    ("escape sequences under `check --explain`", "test_escapes.py::test_explain_escapes_values"),
    ("escape sequence in a file name", "test_escapes.py::test_a_file_name_with_an_escape_is_escaped_in_errors"),
    ("escape sequence in the lines `--diff` prints", "test_escapes.py::test_fix_diff_escapes_the_file_text"),
    ("control character in a YAML file", "test_escapes.py::test_a_control_character_in_yaml_is_one_line"),
    ("`init --force` with a link planted at the .bak name",
     "test_writes.py::test_init_force_never_writes_its_bak_through_a_planted_link"),
    ("`check --fix` / `migrate` of a symlinked config",
     "test_writes.py::test_a_symlinked_config_is_edited_where_the_link_points"),
    ("`migrate` with a link planted at the .bak name",
     "test_writes.py::test_migrate_bak_through_a_planted_link_leaves_the_target_alone"),
    ("file edited between --fix's read and its write",
     "test_writes.py::test_a_file_edited_between_read_and_write_is_refused_and_keeps_the_users_edit"),
    ("file replaced by a same-content copy meanwhile",
     "test_writes.py::test_a_file_replaced_by_a_same_content_copy_is_still_a_change"),
    ("`migrate` and `check --fix` at once on one file (4 rounds)",
     "test_writes.py::test_migrate_and_fix_at_once_keep_both_edits"),
    ("CRLF file through --fix / migrate; migrate's .bak",
     "test_writes.py::test_crlf_stays_crlf_and_the_bak_is_the_original"),
    ("mixed endings, BOM, no final newline through --fix",
     "test_writes.py::test_mixed_endings_bom_and_no_final_newline_survive_a_fix"),
    ("root running --fix / migrate on another user's file",
     "test_writes.py::test_root_fixing_another_users_file_leaves_it_theirs"),
    ("full disk (ENOSPC) under --fix, migrate, init -o, convert", "test_writes.py::test_a_full_disk"),
    ("read-only file system under --fix, migrate, init -o, convert", "test_writes.py::test_a_read_only_file_system"),
    ("`ulimit -f` (EFBIG) under --fix, migrate, init -o, convert", "test_writes.py::test_a_file_size_limit"),
    ("read-only folder (non-root) under --fix, migrate, init -o, convert", "test_writes.py::test_a_read_only_folder"),
    ("FIFO, /dev/zero, /dev/urandom as config, answers or model file, every reader",
     "test_inputs.py::test_special_files_are_refused_by_every_reader_without_reading"),
    ("5,000-digit integer in YAML or JSON through every command",
     "test_inputs.py::test_a_5000_digit_integer_is_one_line_in_every_command"),
    ("num_processes 10**11 and 10**100 (check, run preflight)",
     "test_inputs.py::test_a_count_above_any_machine_is_a_finding_not_an_overflow"),
    ("non-UTF-8, UTF-16, binary, 10,000-deep nesting in `init --answers` and `estimate --model`",
     "test_inputs.py::test_unreadable_answers_and_model_files"),
    ("336-byte alias bomb under `model` and a 50 MB answers file",
     "test_inputs.py::test_an_alias_bomb_under_model_and_a_50_mb_answers_file"),
    ("`deepspeed_config_file: \"\"` (check, convert)",
     "test_inputs.py::test_an_empty_deepspeed_config_file_fails_check_and_convert"),
    ("`deepspeed_config: zero3` (a string) through convert",
     "test_inputs.py::test_deepspeed_config_as_a_string_is_not_converted_as_zero2"),
    ("duplicate keys, tabs, YAML 1.1 numbers against yaml.safe_load",
     "test_inputs.py::test_yaml_is_read_as_accelerates_yaml_safe_load_reads_it"),
    ("duplicate key: the last value is judged", "test_inputs.py::test_a_duplicate_key_is_read_last_wins_and_warned"),
    ("JSON-looking Accelerate YAML (a tab after a colon, 1e8) read as yaml.safe_load reads it",
     "test_inputs.py::test_a_json_looking_accelerate_yaml_is_read_as_yaml_as_accelerate_reads_it"),
    ("FIFO, /dev/zero as `--system FILE` or `--training-args FILE`",
     "test_inputs.py::test_special_files_as_a_machine_profile_or_training_arguments"),
    ("`--model` (estimate, init's answer) 5,000 characters long",
     "test_inputs.py::test_a_model_name_too_long_for_a_path_is_an_unknown_model"),
    ("a file name longer than NAME_MAX (check, --fix, migrate, convert, init -o)",
     "test_inputs.py::test_a_file_name_too_long_for_the_file_system"),
    ("hostile mutants through every reading command (200, fixed seed; the suite's fuzz)",
     "test_fuzz.py::test_hostile_mutants_never_crash_hang_or_reach_the_terminal_raw"),
    # issue 32
    ("doctor: a stranger, another secret, bad JSON, non-UTF-8, 256 KiB + 1 posted as node 1 (real node 0)",
     "test_doctor_peer.py::test_a_bad_peer_is_a_named_problem_not_a_pass_or_an_internal_error"),
    ("doctor: a peer naming a FIFO or a secret file as its token",
     "test_doctor_peer.py::test_a_peer_naming_a_fifo_or_a_secret_file_as_its_token_is_never_opened"),
    ("doctor: a nonce that is a path", "test_doctor_peer.py::test_a_nonce_that_is_a_path_is_refused_by_the_schema"),
    ("doctor: the store listens on --main-address only",
     "test_doctor_peer.py::test_the_store_listens_on_the_address_it_was_given_only"),
    ("doctor: no secret is said in the report",
     "test_doctor_peer.py::test_without_a_secret_the_report_says_peers_were_not_authenticated"),
    ("a link planted by nobody in a sticky folder: migrate -o, convert -o, init -o, run --slurm",
     "test_links.py::test_a_link_planted_by_nobody_in_a_sticky_folder_is_never_written_through"),
    ("--force replaces the planted link, never its target",
     "test_links.py::test_force_replaces_the_link_itself_never_its_target"),
    ("a link owned by neither the user nor the folder's owner (check --fix, migrate)",
     "test_links.py::test_a_link_owned_by_neither_the_user_nor_the_folders_owner_is_not_followed"),
    ("SIGINT / SIGTERM between two renames of a staged write",
     "test_signals.py::test_a_signal_between_two_renames_puts_every_file_back"),
    ("`init --force` interrupted",
     "test_signals.py::test_init_force_interrupted_is_one_line_exit_130_and_the_old_files"),
    ("SIGKILL between two renames, then the next write",
     "test_signals.py::test_what_a_sigkill_left_is_rolled_back_by_the_next_write"),
    ("`check -- --deepspeed` FIFO or /dev/zero", "test_round_two.py::test_the_trainers_deepspeed_file_is_read_bounded"),
    ("`run --dry-run --data` FIFO or /dev/zero",
     "test_round_two.py::test_run_dry_run_data_is_sampled_from_a_regular_file_only"),
    ("an editor saving (in place / by rename) during `check --fix`'s fsync",
     "test_fix_race.py::test_an_edit_saved_during_the_fix_fsync_is_refused_and_kept"),
    ("the same slowed `check --fix` with nobody editing writes its fix",
     "test_fix_race.py::test_without_an_edit_the_slowed_fix_writes"),
    ("`run --dry-run --kind dpo --data` FIFO or /dev/zero",
     "test_trl_data.py::test_a_fifo_or_device_as_dpo_data_is_one_line_unread"),
    ("a 7 GiB DPO data file (1.5 MiB of pairs, then zeros): sampled, not read whole",
     "test_trl_data.py::test_a_big_dpo_file_is_sampled_not_read_whole"),
    ("a bad DPO line inside the sampled first MiB is still named",
     "test_trl_data.py::test_the_sample_still_names_a_bad_line_in_the_first_mib"),
    ("`--reward` forms agreed by init and run (.txt, ~/, if True:, class)",
     "test_round_two.py::test_init_and_run_agree_on_every_reward_form"),
    ("`run --dry-run --kind grpo --reward evil.py:f` imports nothing",
     "test_round_two.py::test_a_dry_run_never_imports_the_reward_file"),
    ("a reward file of 200,000 unary minus signs", "test_round_two.py::test_200000_unary_minus_signs_are_one_line"),
    ("`estimate --micro-batch/--gpus 10**400`",
     "test_round_two.py::test_a_400_digit_count_is_one_line_not_an_overflow"),
    ("`rank-x` in $ACCELWIZ_EXIT_DIR",
     "test_round_two.py::test_a_script_writing_rank_x_into_the_exit_dir_does_not_crash_run"),
    ("doctor wire mutants (450) and every file flag x every hostile file",
     "test_fuzz_round_two.py::test_every_wire_mutant_is_accepted_or_refused_never_a_crash"),
]


def fuzz(count: int, every_command: bool, checkpoint=None) -> tuple[dict, list[str], float]:
    """(case, command) -> Counter of outcomes; the first failures, each with its seed; seconds. `checkpoint`
    (table, failures, seconds, done) is called every 500 mutants, so a long run leaves its result so far."""
    table: dict[tuple[str, str], Counter] = defaultdict(Counter)
    failures: list[str] = []
    start = time.perf_counter()
    for seed in range(count):
        m = mutant(seed)
        with tempfile.TemporaryDirectory() as folder:
            available = laid_out(m, folder)
            chosen = available if every_command else [available[seed % len(available)]]
            for label, argv in chosen:
                outcome = run_command(label, argv, timeout=60)
                cell = table[(m.case, label)]
                cell["runs"] += 1
                cell[f"exit {outcome.exit_code}" if outcome.exit_code in (0, 1, 2) else "other exit"] += \
                    0 if outcome.crash or outcome.hung else 1
                cell["crash"] += outcome.crash is not None
                cell["hang"] += outcome.hung
                cell["raw control"] += outcome.raw_control
                if not outcome.ok and len(failures) < 50:
                    failures.append(f"seed {seed}, {m.case} of {m.source}, `{label}`: {_why(outcome)}")
        if (seed + 1) % 500 == 0:
            print(f"{seed + 1} mutants, {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
            if checkpoint is not None:
                checkpoint(table, failures, time.perf_counter() - start, seed + 1)
    return table, failures, time.perf_counter() - start


def _why(outcome) -> str:
    if outcome.crash:
        import re

        last = outcome.crash.strip().splitlines()[-1]
        return re.sub(r"(.)\1{20,}", lambda m: m.group(1) * 3 + "...", last)[:200]
    if outcome.hung:
        return "hang (60 s)"
    return "raw control character" if outcome.raw_control else f"exit {outcome.exit_code}"


def named_results() -> dict[str, str]:
    """Run tests/hostile and read each test's result from its JUnit XML."""
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "junit.xml"
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(REPO / "tests/hostile"),
                        f"--junitxml={report}"], cwd=REPO, capture_output=True, text=True)
        results: dict[str, Counter] = defaultdict(Counter)
        for case in ElementTree.parse(report).iter("testcase"):
            name = f"{case.get('classname', '').split('.')[-1]}.py::{case.get('name', '').split('[')[0]}"
            verdict = ("failed" if case.find("failure") is not None or case.find("error") is not None
                       else "skipped" if case.find("skipped") is not None else "passed")
            results[name][verdict] += 1
    return {name: ", ".join(f"{n} {v}" for v, n in sorted(c.items())) for name, c in results.items()}


def write_doc(table: dict, failures: list[str], seconds: float, count: int, every: bool, named: dict,
              planned: int | None = None) -> None:
    runs = sum(c["runs"] for c in table.values())
    bad = {k: sum(c[k] for c in table.values()) for k in ("crash", "hang", "raw control")}
    lines = [
        "# Hostile input",
        "",
        "What accelwiz does with files and inputs meant to break it (issue 21): every case below ends in one line",
        "and exit 2 (or a finding, exit 1), never a traceback, a hang, a write through a planted link, a lost",
        "update or a file's content printed. Written by `benchmarks/fuzz_hostile.py`; the named cases are the tests",
        "in tests/hostile, the fuzz is `tests/hostile/mutants.py`.",
        "",
        *named_section(named),
        *_kept_round_two(),
        "## Fuzz",
        "",
        f"{count:,} mutants{f' (of {planned:,} planned; the run was stopped here)' if planned else ''} "
        f"({'every command each' if every else 'one command each, picked by the seed'}): "
        f"{runs:,} command runs in {seconds / 60:.0f} min on {_machine()}; "
        f"**{bad['crash']} uncaught exceptions, {bad['hang']} hangs, {bad['raw control']} raw control characters "
        "on the terminal**. A run passes with exit 0, 1 or 2.",
        "",
        "| Mutation | Command | Runs | Exit 0 | Exit 1 | Exit 2 | Crash | Hang | Raw control |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for case in CASES:
        for (name, label), c in sorted(table.items()):
            if name == case:
                lines.append(f"| {case} | `{label}` | {c['runs']} | {c['exit 0']} | {c['exit 1']} | {c['exit 2']} | "
                             f"{c['crash']} | {c['hang']} | {c['raw control']} |")
    if failures:
        lines += ["", "Failures (first 50):", "", *(f"- {f}" for f in failures)]
    DOC.write_text("\n".join(lines) + "\n")


def named_section(named: dict) -> list[str]:
    return ["## Named cases", "", "| Case | Test (tests/hostile/) | Result |", "|---|---|---|",
            *(f"| {case} | `{test}` | {named.get(test, 'not run')} |" for case, test in NAMED), ""]


def rewrite_named(named: dict) -> None:
    """Only the named-cases section of the existing document (the fuzz section is kept)."""
    text = DOC.read_text()
    start = text.index("## Named cases")
    end = text.index("## Round two") if "## Round two" in text else text.index("## Fuzz")
    DOC.write_text(text[:start] + "\n".join(named_section(named)) + "\n" + text[end:])


def round_two(count: int) -> None:
    """Issue 32's surfaces (tests/hostile/round_two.py): `count` doctor wire mutants, then every file-taking flag
    with every hostile file; written as the "Round two" section of docs/hostile-input.md."""
    from tests.hostile.round_two import HOSTILE_FILES, WIRE_MUTATIONS, fuzz_flags, fuzz_wire

    start = time.perf_counter()
    wire, crashes = fuzz_wire(count)
    wire_seconds = time.perf_counter() - start
    with tempfile.TemporaryDirectory() as folder:
        results, failures = fuzz_flags(Path(folder))
    seconds = time.perf_counter() - start - wire_seconds
    lines = ["## Round two (issue 32)", "",
             f"Doctor wire format: {count:,} mutants of a sealed record through `wire.open_record` in "
             f"{wire_seconds:.1f} s on {_machine()}: **{sum(c['crash'] for c in wire.values())} crashes**.", "",
             "| Mutation | Runs | Accepted | Refused | Crash |", "|---|---|---|---|---|",
             *(f"| {m} | {sum(wire[m].values())} | {wire[m]['accepted']} | {wire[m]['refused']} | {wire[m]['crash']} |"
               for m in WIRE_MUTATIONS if m in wire), "",
             f"Every file-taking flag x every hostile file: {len(results)} command runs in {seconds:.0f} s; "
             f"**{len(failures)} failures** (crash, hang, raw control character, exit outside 0-2, a write "
             "through a link). Exit codes:", "",
             "| Flag | " + " | ".join(HOSTILE_FILES) + " |", "|---|" + "---|" * len(HOSTILE_FILES)]
    for flag in dict.fromkeys(f for f, _ in results):
        lines.append(f"| `{flag}` | " + " | ".join(_cell(results[(flag, k)]) for k in HOSTILE_FILES) + " |")
    lines += ["", *(f"- {f}" for f in [*crashes, *failures])]
    text = DOC.read_text()
    if "## Round two" in text:
        text = text[:text.index("## Round two")]
    fuzz = text.index("## Fuzz")  # before the long 10,000-mutant table
    DOC.write_text(text[:fuzz] + "\n".join(lines).rstrip() + "\n\n" + text[fuzz:])


def _kept_round_two() -> list[str]:
    """The "Round two" section as --round-two last wrote it (a full fuzz run keeps it)."""
    text = DOC.read_text() if DOC.is_file() else ""
    if "## Round two" not in text:
        return []
    return text[text.index("## Round two"):text.index("## Fuzz")].rstrip().splitlines() + [""]


def _cell(outcome) -> str:
    return "crash" if outcome.crash else "hang" if outcome.hung else str(outcome.exit_code)


def _machine() -> str:
    import os
    import platform

    return f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--every-command", action="store_true")
    parser.add_argument("--named-only", action="store_true", help="rerun tests/hostile and rewrite only the "
                                                                   "named-cases table of docs/hostile-input.md")
    parser.add_argument("--round-two", type=int, metavar="N", help="only issue 32's fuzz: N doctor wire mutants "
                                                                    "and every file flag; its section of the doc")
    args = parser.parse_args()
    if args.round_two is not None:
        round_two(args.round_two)
        return
    named = named_results()
    if args.named_only:
        rewrite_named(named)
        return

    def checkpoint(table: dict, failures: list[str], seconds: float, done: int) -> None:
        write_doc(table, failures, seconds, done, args.every_command, named, planned=args.count)

    table, failures, seconds = fuzz(args.count, args.every_command, checkpoint)
    write_doc(table, failures, seconds, args.count, args.every_command, named)
    print(f"wrote {DOC}", file=sys.stderr)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
