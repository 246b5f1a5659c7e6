"""Which model describes a document."""

from __future__ import annotations

from accelwiz.config.base import StrictModel
from accelwiz.document import Document


def model_for(document: Document) -> type[StrictModel]:
    if document.kind == "deepspeed":
        from accelwiz.config.deepspeed import DeepSpeedConfig

        return DeepSpeedConfig
    from accelwiz.config.accelerate import AccelerateConfig, SageMakerConfig

    if document.get("compute_environment") == "AMAZON_SAGEMAKER":
        return SageMakerConfig
    return AccelerateConfig
