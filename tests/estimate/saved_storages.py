"""What autograd keeps for backward, as the formula-vs-real tests count it: every tensor a forward saves, each
storage once (views of one buffer are one allocation), parameters aside (saved by reference, never copied).

    with SavedStorages() as saved:
        model(ids)
    assert saved.bytes(model) == layer_activations(...)

The saved tensors are held until the block's owner drops the object, so no storage is freed and reused under
another tensor's pointer while counting.
"""

from __future__ import annotations

from collections.abc import Callable

import torch


class SavedStorages:
    def __init__(self) -> None:
        self.kept: list[torch.Tensor] = []

    def __enter__(self) -> SavedStorages:
        self._hooks = torch.autograd.graph.saved_tensors_hooks(self._pack, lambda tensor: tensor)
        self._hooks.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._hooks.__exit__(*exc)

    def _pack(self, tensor: torch.Tensor) -> torch.Tensor:
        self.kept.append(tensor)
        return tensor

    def bytes(self, model: torch.nn.Module | None = None,
              where: Callable[[torch.Tensor], bool] = lambda tensor: True) -> int:
        """Bytes of the distinct storages kept (those `where` accepts), less `model`'s parameters."""
        parameters = {p.untyped_storage().data_ptr() for p in model.parameters()} if model is not None else set()
        storages = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in self.kept if where(t)}
        return sum(size for pointer, size in storages.items() if pointer not in parameters)
