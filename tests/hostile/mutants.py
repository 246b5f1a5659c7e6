"""Hostile mutants of real inputs, and the commands that read them: shared by tests/hostile/test_fuzz.py (a few
hundred, in the suite) and benchmarks/fuzz_hostile.py (10,000, the slow tier).

A mutant is a pure function of an integer seed: `mutant(seed)` picks a seed file (a corpus config, an answers
YAML, a HF config.json) and one hostile transformation, so a failure is reproduced from its seed alone.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import corpus_dir

ANSWERS = ("system: 8xH100-80GB\nmodel: llama-3-8b\nmicro_batch: 2\nnum_machines: 1\ngpus: 8\nstrategy: zero3\n"
           "precision: bf16\ngradient_accumulation: 4\ngradient_clipping: 1.0\ntorch_compile: false\n")
HF_CONFIG = json.dumps({
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 256, "intermediate_size": 688,
    "num_attention_heads": 4, "num_key_value_heads": 4, "num_hidden_layers": 2, "vocab_size": 1024,
    "max_position_embeddings": 512, "rms_norm_eps": 1e-5, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
}, indent=2) + "\n"

# What a hostile file can hold; each entry is spliced into a real file at a random place.
CONTROL = ["\x1b[31mRED\x1b[0m", "\x1b]0;pwned\x07", "\x1b[2J", "\x00", "\r", "\u202e", "\u2028", "\x7f", "\x9b"]
NUMBERS = ["9" * 5000, str(10**100), str(-(10**30)), "1e400", "-1e400", ".nan", "0x" + "f" * 40, "1_000_000",
           "9" * 19, "0o777777777777777777777777", str(2**63 - 1), str(-(2**63) + 1), str(2**53 + 1), "1e308",
           "-1", "0", "1e-320", "4294967296"]
PATHS = ["", " ", "/etc/passwd", "../../../../etc/passwd", "/dev/zero", "/tmp", "~/ds.json", "none", "None",
         "x" * 5000, "\x1b[31m.json", "accelerate.yaml"]


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True) or [""]


def splice(text: str, rng: random.Random, what: str) -> str:
    at = rng.randrange(len(text) + 1)
    return text[:at] + what + text[at:]


def _control_in_line(text: str, rng: random.Random) -> str:
    lines = _lines(text)
    i = rng.randrange(len(lines))
    lines[i] = splice(lines[i].rstrip("\n"), rng, rng.choice(CONTROL)) + "\n"
    return "".join(lines)


def _control_in_key(text: str, rng: random.Random) -> str:
    """A key holding an escape sequence, written with a JSON escape (`"name\\u001b[31m"`): valid JSON, and valid
    YAML too (a double-quoted scalar), so the key reaches the renderers."""
    lines = _lines(text)
    keyed = [i for i, line in enumerate(lines) if ":" in line and line.strip()[:1] not in ("#", "-", "")]
    if not keyed:
        return splice(text, rng, rng.choice(CONTROL))
    i = rng.choice(keyed)
    head, _, tail = lines[i].partition(":")
    indent = head[: len(head) - len(head.lstrip())]
    lines[i] = f"{indent}{json.dumps(head.strip().strip(chr(34)) + rng.choice(CONTROL))}:{tail}"
    return "".join(lines)


def _number(text: str, rng: random.Random) -> str:
    import re

    spots = list(re.finditer(r"(?<=[:\s])-?\d+(\.\d+)?(?=[\s,}\n])", text))
    if not spots:
        return text + f"\nnum_processes: {rng.choice(NUMBERS)}\n"
    spot = rng.choice(spots)
    return text[:spot.start()] + rng.choice(NUMBERS) + text[spot.end():]


def _duplicate_line(text: str, rng: random.Random) -> str:
    lines = _lines(text)
    i = rng.randrange(len(lines))
    return "".join(lines[: i + 1] + [lines[i]] + lines[i + 1:])


def _tab_after_colon(text: str, rng: random.Random) -> str:
    spots = [i for i in range(len(text) - 1) if text[i: i + 2] == ": "]
    if not spots:
        return text + "\nkey:\tvalue\n"
    i = rng.choice(spots)
    return text[: i + 1] + "\t" + text[i + 2:]


def _deep(text: str, rng: random.Random) -> str:
    depth = rng.choice([100, 1000, 10_000])
    nested = "[" * depth + "]" * depth
    if text.lstrip().startswith("{"):
        return text.rstrip().rstrip("}") + f', "deep": {nested}}}\n'
    return text + f"deep: {nested}\n"


def _alias_bomb(text: str, rng: random.Random) -> str:
    width = rng.choice([5, 9, 12])
    lines = [f"a0: &a0 [{', '.join(['x'] * width)}]"]
    for i in range(1, rng.choice([4, 7, 9])):
        lines.append(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]")
    key = rng.choice(["model", "deepspeed_config", "bomb"])
    lines.append(f"{key}: *a{len(lines) - 1}")
    return text + "\n" + "\n".join(lines) + "\n"


def _truncate(text: str, rng: random.Random) -> str:
    return text[: rng.randrange(len(text) + 1)]


def _long_value(text: str, rng: random.Random) -> str:
    return splice(text, rng, "x" * rng.choice([10_000, 200_000]))


def _ds_path(text: str, rng: random.Random) -> str:
    path = rng.choice(PATHS)
    if "deepspeed_config_file:" in text:
        import re

        written = f"deepspeed_config_file: {json.dumps(path)}"
        return re.sub(r"deepspeed_config_file:.*", lambda _: written, text, count=1)  # a function: no escapes
    return text + f"deepspeed_config:\n  deepspeed_config_file: {json.dumps(path)}\n"


def _section_as_scalar(text: str, rng: random.Random) -> str:
    import re

    return re.sub(r"^(\w+_config):\s*$", lambda m: f"{m.group(1)}: {rng.choice(['zero3', '3', 'true', '[]'])}",
                  text, count=1, flags=re.MULTILINE) + rng.choice(["", "deepspeed_config: zero3\n"])


# name -> text transformation; the byte-level ones are below
TEXT_CASES: dict[str, Callable[[str, random.Random], str]] = {
    "control character in a line": _control_in_line,
    "control character in a key": _control_in_key,
    "huge or odd number": _number,
    "duplicate line (key)": _duplicate_line,
    "tab after a colon": _tab_after_colon,
    "deep nesting": _deep,
    "alias bomb": _alias_bomb,
    "truncated": _truncate,
    "very long value": _long_value,
    "hostile deepspeed_config_file": _ds_path,
    "section written as a scalar": _section_as_scalar,
}


def _bytes_case(name: str, text: str, rng: random.Random) -> bytes:
    raw = text.encode("utf-8")
    if name == "invalid UTF-8 bytes":
        data = bytearray(raw)
        for _ in range(rng.randint(1, 8)):
            at = rng.randrange(len(data) + 1)
            data[at:at] = bytes([rng.choice([0x80, 0xC3, 0xFF, 0xFE])])
        return bytes(data)
    if name == "UTF-16":
        return text.encode(rng.choice(["utf-16", "utf-16-le", "utf-16-be"]))
    if name == "binary":
        return bytes(rng.randrange(256) for _ in range(rng.choice([16, 4096])))
    if name == "UTF-8 byte-order mark":
        return b"\xef\xbb\xbf" + raw
    if name == "CRLF line endings":
        return text.replace("\n", "\r\n").encode("utf-8")
    if name == "empty":
        return rng.choice([b"", b"\n", b"   \n", b"---\n", b"---\n---\n", b"~\n", b"[]\n", b"{}\n"])
    raise KeyError(name)


BYTES_CASES = ["invalid UTF-8 bytes", "UTF-16", "binary", "UTF-8 byte-order mark", "CRLF line endings", "empty"]
CASES = [*TEXT_CASES, *BYTES_CASES]


@dataclass(frozen=True)
class Mutant:
    seed: int
    case: str
    kind: str  # "config", "answers" or "model": which commands read it
    source: str  # the file it was made from
    data: bytes


def seed_files() -> list[tuple[str, str, str]]:
    """(kind, name, text): the corpus's real configs, an answers YAML and a HF config.json."""
    corpus = corpus_dir()
    files = [("answers", "answers.yaml", ANSWERS), ("model", "config.json", HF_CONFIG)]
    if corpus is not None:
        for path in sorted((corpus / "real").iterdir()):
            if path.suffix in (".yaml", ".yml", ".json"):
                files.append(("config", path.name, path.read_text(encoding="utf-8", errors="replace")))
    return files


_SEEDS: list[tuple[str, str, str]] | None = None


def mutant(seed: int) -> Mutant:
    global _SEEDS
    if _SEEDS is None:
        _SEEDS = seed_files()
    rng = random.Random(seed)
    kind = rng.choices(["config", "answers", "model"], weights=[6, 2, 2])[0]
    kind, name, text = rng.choice([s for s in _SEEDS if s[0] == kind] or _SEEDS)
    case = rng.choice(CASES)
    data = TEXT_CASES[case](text, rng).encode("utf-8") if case in TEXT_CASES else _bytes_case(case, text, rng)
    return Mutant(seed, case, kind, name, data)


def commands(kind: str, path: Path, out: Path) -> list[tuple[str, list[str]]]:
    """(label, argv) of every command that reads a file of `kind`; `out` is a scratch folder for outputs."""
    if kind == "answers":
        return [("init --answers", ["init", "--answers", str(path), "--defaults", "--dry-run",
                                    "-o", str(out / "accelerate.yaml")])]
    if kind == "model":
        return [("estimate --model", ["estimate", "--model", str(path)])]
    return [
        ("check", ["check", str(path)]),
        ("check --explain", ["check", "--explain", str(path)]),
        ("check --format json", ["check", "--format", "json", str(path)]),
        ("check --format github", ["check", "--format", "github", str(path)]),
        ("convert", ["convert", str(path), "--to", "fsdp" if b"DEEPSPEED" in path.read_bytes() else "deepspeed",
                     "-o", str(out / "converted.yaml"), "--force"]),
        ("migrate --diff", ["migrate", "--diff", str(path)]),
    ]


def file_name(m: Mutant) -> str:
    return {"answers": "answers.yaml", "model": "config.json"}.get(m.kind, m.source)


def laid_out(m: Mutant, folder: str | Path) -> list[tuple[str, list[str]]]:
    """Write the mutant into `folder` under its file name, with an empty `out` folder beside it, and return the
    (label, argv) of every command that reads it there."""
    path = Path(folder) / file_name(m)
    path.write_bytes(m.data)
    out = Path(folder) / "out"
    out.mkdir()
    return commands(m.kind, path, out)


class Hang(BaseException):
    """Raised by the alarm inside a command that ran past its time: BaseException, so no `except Exception` in
    the command (or in CliRunner) swallows it."""


@dataclass(frozen=True)
class Outcome:
    label: str
    exit_code: int | None
    crash: str | None  # the uncaught exception, if any
    hung: bool
    raw_control: bool  # a control character (other than newline and tab) reached the terminal output

    @property
    def ok(self) -> bool:
        return self.crash is None and not self.hung and self.exit_code in (0, 1, 2) and not self.raw_control


def run_command(label: str, argv: list[str], *, timeout: float) -> Outcome:
    """One command in-process (typer's CliRunner, as the CLI tests run it), under an alarm."""
    import signal
    import traceback
    import unicodedata

    from typer.testing import CliRunner

    from accelwiz.cli import app

    def expire(*_):
        raise Hang

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        result = CliRunner().invoke(app, argv)
    except Hang:
        return Outcome(label, None, None, True, False)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    crash = None
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        crash = "".join(traceback.format_exception(result.exception))[-1500:]
    shown = result.stdout + result.stderr
    raw = any(ch not in "\n\t" and unicodedata.category(ch) == "Cc" for ch in shown)
    return Outcome(label, result.exit_code, crash, False, raw)


def run_mutant(m: Mutant, folder: Path, *, timeout: float = 60.0) -> list[Outcome]:
    """Write the mutant into `folder` and run every command that reads its kind of file."""
    path = folder / file_name(m)
    path.write_bytes(m.data)
    out = folder / "out"
    out.mkdir(exist_ok=True)
    return [run_command(label, argv, timeout=timeout) for label, argv in commands(m.kind, path, out)]
