"""The libraries' own readers, set up once per test module (each import costs ~2 s of torch)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any


def deepspeed_validator() -> Iterator[Callable[[dict, int], Any]]:
    """DeepSpeedConfig with torch.distributed faked to a given world size (the batch identity needs it); the
    real `dist` is restored afterwards. See cpu-feasibility.md §2."""
    import deepspeed.runtime.config as ds_config

    original = ds_config.dist

    class FakeDist:
        world_size = 1

        @staticmethod
        def get_rank() -> int:
            return 0

        @classmethod
        def get_world_size(cls, group: Any = None) -> int:
            return cls.world_size

    ds_config.dist = FakeDist

    def validate(config: dict, world_size: int) -> Any:
        FakeDist.world_size = world_size
        return ds_config.DeepSpeedConfig(config)

    try:
        yield validate
    finally:
        ds_config.dist = original
