"""The base model and shared field types for both config files."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from accelwiz.plugin_free import BuiltWithoutPlugins

AUTO = "auto"
Auto = Literal["auto"]


class StrictModel(BaseModel, metaclass=BuiltWithoutPlugins):
    """A config section: unknown keys are errors, types are checked strictly (no "8" for 8).

    Each section also names the keys it does not accept but that we recognise, so a finding can say more than
    "unknown key": LEGACY_KEYS are still accepted and converted by the library (deprecated), REMOVED_KEYS are
    refused by current versions, MISPLACED_KEYS belong in another section or file. Values are the hint.
    """

    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True, frozen=True,
                              protected_namespaces=())

    LEGACY_KEYS: ClassVar[dict[str, str]] = {}
    # key -> {old value: hint}: values a library renamed, so an old file gets "write X" instead of a list.
    RENAMED_VALUES: ClassVar[dict[str, dict[str, str]]] = {}
    REMOVED_KEYS: ClassVar[dict[str, str]] = {}
    MISPLACED_KEYS: ClassVar[dict[str, str]] = {}

    def to_data(self) -> dict[str, Any]:
        """The plain data this model stands for, as it would be written to a file (aliases, no unset keys)."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)


def _integral_float_to_int(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value


# DeepSpeed reads integers through pydantic's lax mode, which accepts integral floats such as 5e8 (JSON has no
# integer exponent notation, so every real config writes bucket sizes that way). Only that conversion is allowed
# here: "8" and true stay errors (AW005, AW003), unlike in pydantic's lax mode.
LaxInt = Annotated[int, BeforeValidator(_integral_float_to_int)]
NonNegativeLaxInt = Annotated[int, BeforeValidator(_integral_float_to_int), Field(ge=0)]
PositiveLaxInt = Annotated[int, BeforeValidator(_integral_float_to_int), Field(gt=0)]
