"""An Accelerate YAML read by accelwiz as accelerate reads it: `load_config_from_file` (accelerate/commands/
config/config_args.py) does `yaml.safe_load(open(path, encoding="utf-8"))`. The same bytes go to both; the data
must be equal (anchors, merge keys, duplicate keys: the last wins) and a file one refuses the other refuses."""

from __future__ import annotations

import pytest
import yaml

from accelwiz.document import load_document
from accelwiz.errors import InputError

BASE = "distributed_type: MULTI_GPU\nnum_processes: 2\n"
TRICKY = {
    "plain": BASE,
    "anchor-alias": BASE + "fsdp_config: &fsdp\n  fsdp_version: 2\nextra: *fsdp\n",
    "merge-key": BASE + "base: &b\n  zero_stage: 2\n  offload_optimizer_device: none\n"
                        "deepspeed_config:\n  <<: *b\n  zero_stage: 3\n",
    "merge-list": BASE + "a: &a {x: 1}\nb: &b {y: 2}\nc:\n  <<: [*a, *b]\n  x: 3\n",
    "duplicate-key": BASE + "num_processes: 4\n",
    "duplicate-nested": BASE + "deepspeed_config:\n  zero_stage: 2\n  zero_stage: 3\n",
    "yaml11-no": BASE + "mixed_precision: no\n",
    "quoted-no": BASE + "mixed_precision: 'no'\n",
    "float-exponent": BASE + "x: 1e8\ny: 1.0e+8\n",
    "tab-after-colon": "distributed_type:\tMULTI_GPU\n",
    "bad-indent": "distributed_type: MULTI_GPU\n  num_processes: 2\n",
    "byte-order-mark": "\ufeff" + BASE,
    "flow-mapping": "{distributed_type: MULTI_GPU, num_processes: 2}\n",
    "document-marker": "---\n" + BASE + "...\n",
    "unclosed-quote": BASE + "main_process_ip: '10.0.0.1\n",
}


@pytest.mark.parametrize("name", sorted(TRICKY))
def test_accelwiz_reads_the_yaml_as_yaml_safe_load_does(tmp_path, name):
    path = tmp_path / "accelerate.yaml"
    path.write_bytes(TRICKY[name].encode("utf-8"))
    with open(path, encoding="utf-8") as handle:  # exactly load_config_from_file's read
        try:
            theirs = yaml.safe_load(handle)
        except yaml.YAMLError:
            theirs = InputError
    try:
        ours = load_document(path, kind="accelerate").data
    except InputError:
        ours = InputError
    assert ours == theirs
