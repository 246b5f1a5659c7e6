"""JSON Schemas generated from the models; checked in under schemas/ and shipped in the wheel."""

from __future__ import annotations

import json

SCHEMA_FILES = {"accelerate": "accelerate-config.schema.json", "deepspeed": "deepspeed-config.schema.json",
                "plan": "accelwiz-plan.schema.json"}


def render_schemas() -> dict[str, str]:
    from accelwiz.config.accelerate import AccelerateConfig
    from accelwiz.config.deepspeed import DeepSpeedConfig
    from accelwiz.plan_file import PlanFile

    out = {}
    for which, model, title in (("accelerate", AccelerateConfig, "Accelerate config (accelerate launch)"),
                                ("deepspeed", DeepSpeedConfig, "DeepSpeed config (JSON)"),
                                ("plan", PlanFile, "accelwiz plan (accelwiz init)")):
        schema = model.model_json_schema(by_alias=True)
        schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": title, **schema}
        out[SCHEMA_FILES[which]] = json.dumps(schema, indent=2, sort_keys=False) + "\n"
    return out

