"""Rules judge what runs through `ctx.effective`, not the documents' raw values (issue 18: "value spellings
normalised as the launcher normalises them"). A raw read of a value the library normalises (`NONE`, "True",
"SUM", `BF16`, "auto") turns a spelling the library accepts into a false error or a miss.

This test walks accelwiz/rules/** and finds every way into the documents: `ctx.accelerate`, `ctx.deepspeed`,
`ctx.documents`, `ctx.document(...)` and the document helpers of accelwiz.effective. Each must be listed below
with its reason; a new one fails with a message saying to read the effective value. Testing a document's
presence (`ctx.deepspeed is None`) or naming its file (`.path`, `.name`) reads no value and is allowed.
"""

from __future__ import annotations

import ast
from pathlib import Path

RULES = Path(__file__).resolve().parents[2] / "accelwiz" / "rules"
BUILDERS = {"engine.py", "context.py"}  # they build the context: reading the documents is their job
DOCUMENTS = {"accelerate", "deepspeed", "documents"}
HELPERS = {"fsdp_entry", "section_entry", "named_deepspeed_file", "resolve", "document"}
CONTEXTS = {"ctx", "context", "unit"}

# (a) rules about the document's text: a key's name, place, presence or duplication, how "auto" is written,
# or where a finding points (file:line:col). These read the document on purpose.
DOCUMENT_TEXT = {
    ("dead_keys.py", "harmless"): "the value of a renamed key nothing reads, to compare with what runs",
    ("deepspeed/_shared.py", "hf_launched"): "whether the JSON is written for the HF integrations (its \"auto\")",
    ("deepspeed/auto.py", "_unfilled_autos"): "the keys written as \"auto\"",
    ("deepspeed/auto.py", "auto_needs_trainer"): "the keys written as \"auto\"",
    ("deepspeed/auto.py", "hidden_size_auto_below_zero3"): "the keys written as \"auto\"",
    ("deepspeed/readers.py", "_accelerate_config_refused"): "an Accelerate config's text, read as accelerate does",
    ("deepspeed/readers.py", "_judged"): "the JSON's text, read by each consumer's own reader",
    ("deepspeed/readers.py", "known_consumers"): "whether the JSON is written for the HF integrations (its \"auto\")",
    ("deepspeed/batch.py", "batch_size_missing"): "which batch keys are written (DeepSpeed asks for one)",
    ("deepspeed/optimizer.py", "offload_without_optimizer_block"):
        "whether an optimizer block is written, and zero_force_ds_cpu_optimizer as DeepSpeed tests it (raw, for "
        "Python truth: the string \"false\" counts as true)",
    ("deepspeed/batch.py", "batch_size_mismatch"):
        "DeepSpeed reads the three batch keys raw (get_scalar_param) and asserts on them as written",
    ("deepspeed/batch.py", "gradient_accumulation_disagreement"):
        "the YAML key accelerate refuses next to a JSON, compared with the JSON's",
    ("deepspeed/optimizer.py", "optimizer_max_grad_norm"): "a key DeepSpeed refuses where it is written",
    ("deepspeed/optimizer.py", "autotuning_arg_mapping_unknown_key"): "key names that match no DeepSpeed key",
    ("deepspeed/precision.py", "_misplaced_precision"): "a `mixed_precision` key DeepSpeed never reads",
    ("deepspeed/reference.py", "deepspeed_file_with_accelerate_fields"):
        "YAML keys accelerate refuses next to a JSON (their presence)",
    ("deepspeed/reference.py", "deepspeed_file_not_found"): "how deepspeed_config_file is spelled",
    ("deepspeed/reference.py", "zero_optimization_missing"): "the presence of the zero_optimization block",
    ("deepspeed/reference.py", "zero_optimization_missing_for_accelerate"):
        "the presence of the zero_optimization block",
    ("deepspeed/zero.py", "pipeline_with_zero_partitioned_gradients"): "the presence of the pipeline block",
    ("deepspeed/zero.py", "stage3_key_given_twice"): "one setting written under two names",
    ("hardware/deepspeed_features.py", "deepspeed_key_newer_than_installed"):
        "keys an older DeepSpeed refuses by name, whatever their value (extra fields not permitted)",
    ("fsdp_setup.py", "fsdp_no_wrap"): "the presence of the fsdp_config block (none: the plugin is built elsewhere)",
    ("fsdp.py", "_entry"): "fsdp_config keys the FSDP version in use ignores (AW301, AW302, AW304, AW305)",
    ("memory_view.py", "anchor"): "where a memory finding points (file:line:col)",
    ("placeholders.py", "claimed_placeholder"): "template placeholders left in the text",
    ("placeholders.py", "placeholder_launch_value"): "template placeholders left in the text",
    ("precision_settings.py", "_view"): "fp8_config / dynamo_config key names the launcher ignores or renames",
    ("precision_settings.py", "_fp8"): "fp8_config key names the launcher ignores or renames",
    ("precision_settings.py", "dynamo_options_without_backend"): "dynamo_config keys written without a backend",
    ("report.py", "_origin"): "--explain: where each value is written",
    ("report.py", "render_explanation"): "--explain: the files' names",
    ("duplicate_keys.py", "duplicate_json_key"): "keys written twice",
    ("duplicate_keys.py", "duplicate_yaml_key"): "keys written twice",
    ("topology.py", "launcher_ignored_key"): "keys `accelerate launch` ignores in the file",
    ("topology.py", "multi_cpu_without_hostfile"): "whether a hostfile is named at all",
    ("topology.py", "section_for_another_distributed_type"): "sections written for another distributed type",
    ("trainer_view.py", "_inline_section"):
        "the inline keys accelwiz.config.trainer_deepspeed builds the Trainer's config from, as accelerate does",
    ("trainer_view.py", "trainer_view"):
        "hands the JSON to the Trainer's resolution (accelwiz.config.trainer_deepspeed), which reads it as "
        "the Trainer does",
    ("trainer_fsdp.py", "fsdp1_sharding"): "the fsdp_sharding_strategy the launcher exports as FSDP_SHARDING_STRATEGY "
                                           "whatever the YAML's version (effective.fsdp_sharding is FSDP2's "
                                           "reshard view)",
}

# (b) not moved yet: rules about what runs that still read the document, each named as known debt (none today);
# the list may only shrink.
NOT_YET_MOVED: dict[tuple[str, str], str] = {}


def _is_presence_test(node: ast.Attribute, parent: ast.AST | None) -> bool:
    """`ctx.deepspeed is None` / `is not None`, or the file's `.path` / `.name`: no value is read."""
    if isinstance(parent, ast.Compare):
        return all(isinstance(op, (ast.Is, ast.IsNot)) for op in parent.ops) and any(
            isinstance(c, ast.Constant) and c.value is None for c in parent.comparators)
    return isinstance(parent, ast.Attribute) and parent.attr in ("path", "name")


def _reads(tree: ast.Module) -> list[tuple[str, int, str]]:
    """(function, line, what) for each way into a document in one module."""
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}

    def function(node: ast.AST) -> str:
        while node in parents:
            node = parents[node]
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return node.name
        return "<module>"

    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in DOCUMENTS and isinstance(node.value, ast.Name) \
                and node.value.id in CONTEXTS and not _is_presence_test(node, parents.get(node)):
            found.append((function(node), node.lineno, f"{node.value.id}.{node.attr}"))
        elif isinstance(node, ast.Call):
            called = node.func
            name = called.id if isinstance(called, ast.Name) else (
                called.attr if isinstance(called, ast.Attribute) and isinstance(called.value, ast.Name)
                and called.value.id in CONTEXTS else None)
            if name in HELPERS:
                found.append((function(node), node.lineno, f"{name}()"))
    return found


def raw_reads(root: Path = RULES) -> dict[tuple[str, str], list[str]]:
    """(module, function) -> the raw reads in it ("line: what"), over every rule module."""
    sites: dict[tuple[str, str], list[str]] = {}
    for path in sorted(root.rglob("*.py")):
        if path.name in BUILDERS:
            continue
        module = path.relative_to(root).as_posix()
        for name, line, what in _reads(ast.parse(path.read_text(encoding="utf-8"))):
            sites.setdefault((module, name), []).append(f"{line}: {what}")
    return sites


def test_rules_read_values_through_the_effective_view():
    sites = raw_reads()
    new = {site: lines for site, lines in sites.items() if site not in DOCUMENT_TEXT | NOT_YET_MOVED}
    assert not new, (
        "rules read raw document values; read the effective value instead (ctx.effective, computed once in "
        "accelwiz/effective.py / effective_settings.py, as the launcher normalises it: NONE, \"True\", \"auto\"), "
        "or, for a rule about the document's text, add the (module, function) to DOCUMENT_TEXT with its reason:\n"
        + "\n".join(f"  accelwiz/rules/{module}:{line} in {name}()" for (module, name), lines in sorted(new.items())
                    for line in lines))


def test_the_allow_lists_name_only_sites_that_exist():
    """A stale entry would let the next raw read in that function pass unseen: the lists only shrink."""
    sites = raw_reads()
    stale = sorted(site for site in DOCUMENT_TEXT | NOT_YET_MOVED if site not in sites)
    assert not stale, f"remove these allow-list entries, they no longer read a document: {stale}"
    assert not set(DOCUMENT_TEXT) & set(NOT_YET_MOVED)


def test_the_guard_sees_a_raw_read(tmp_path):
    """The scanner finds the shapes a raw read takes, and lets a presence test through."""
    (tmp_path / "sample.py").write_text(
        "def flag(ctx):\n"
        "    return ctx.accelerate.get('deepspeed_config', 'zero3_init_flag')\n"
        "def stage(ctx):\n"
        "    json = ctx.deepspeed\n"
        "    return json.get('zero_optimization', 'stage')\n"
        "def entry(ctx):\n"
        "    return fsdp_entry(ctx.accelerate, 'fsdp_version')\n"
        "def present(ctx):\n"
        "    return ctx.deepspeed is not None and ctx.deepspeed.path.name\n", encoding="utf-8")
    assert set(raw_reads(tmp_path)) == {("sample.py", "flag"), ("sample.py", "stage"), ("sample.py", "entry")}
