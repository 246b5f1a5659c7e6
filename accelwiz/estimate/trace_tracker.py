"""The trace's memory counter: torch's MemTracker, keeping the peak of each phase, every allocation and free in
order (for the caching-allocator replay, allocator.py), and autocast's copies of the parameters in their own
category (MemTracker's otherwise unused `Other`).

This module imports torch at the top: import it only inside a function (trace.py's `_phase_tracker` does), so that
the commands that never trace start without torch.
"""

from __future__ import annotations

from typing import Any

import torch
from torch.distributed._tools.common_utils import get_untyped_storages
from torch.distributed._tools.mem_tracker import _TOTAL_KEY, MemTracker, _MemRefType, _UpdateType

# MemTracker's reference types -> the trace's categories (trace_result.CATEGORIES)
_NAMES = {
    _MemRefType.PARAM: "parameters",
    _MemRefType.BUFFER: "buffers",
    _MemRefType.OTH: "autocast_copies",
    _MemRefType.GRAD: "gradients",
    _MemRefType.ACT: "activations",
    _MemRefType.TEMP: "temporaries",
    _MemRefType.OPT: "optimizer",
}


class PhaseTracker(MemTracker):
    """A MemTracker that keeps the peak of each phase (set by the driving loop) and files a `_to_copy` of a
    parameter's storage (`param_storages`) as an autocast copy."""

    def __init__(self, param_storages: Any) -> None:
        super().__init__()
        self._param_storages = param_storages
        self._phase: str = "setup"
        self.peaks: dict[str, tuple[int, dict[str, int]]] = {}
        # every allocation and free, in order, for the caching-allocator replay (allocator.py)
        self.events: list[tuple] = []

    @property
    def phase(self) -> str:
        return self._phase

    @phase.setter
    def phase(self, name: str) -> None:
        self._phase = name
        self.events.append(("phase", name))

    def _update_snap(self, u_type: Any, winfo: Any, old_mem_consumed: Any = None, old_reftype: Any = None) -> None:
        super()._update_snap(u_type, winfo, old_mem_consumed, old_reftype)
        if u_type == _UpdateType.ADD:
            self.events.append(("alloc", id(winfo), winfo.mem_consumed))
        elif u_type == _UpdateType.DEL:
            self.events.append(("free", id(winfo)))
        elif u_type == _UpdateType.SIZE:  # a storage resized in place: freed and allocated again
            self.events += [("free", id(winfo)), ("alloc", id(winfo), winfo.mem_consumed)]

    def snapshot(self) -> dict[str, int]:
        snap = self._curr_mem_snap.get(torch.device("cpu"), {})
        return {_NAMES[k]: v for k, v in snap.items() if k != _TOTAL_KEY}

    def _track_module_params_and_buffers(self, module: Any, install_grad_hooks: bool = True) -> Any:
        # MemTracker hooks every parameter, and a frozen one (LoRA's base) refuses a hook: hook trainables only
        memory = super()._track_module_params_and_buffers(module, install_grad_hooks=False)
        for param in module.parameters():
            if install_grad_hooks and param.requires_grad and param not in self._param_to_grad_hook_handles:

                def grad_hook(grad: Any) -> None:
                    self._update_and_maybe_create_winfos(grad, _MemRefType.GRAD)

                self._param_to_grad_hook_handles[param] = (
                    param.register_hook(grad_hook),
                    param.register_post_accumulate_grad_hook(lambda p: grad_hook(p.grad)),
                )
        return memory

    def _update_peak_stats(self, peak_state: Any) -> None:  # per operator: only the phase maxima
        snap = self._curr_mem_snap.get(torch.device("cpu"))
        if snap is None:
            return
        best = self.peaks.get(self.phase)
        if best is None or snap[_TOTAL_KEY] > best[0]:
            self.peaks[self.phase] = (snap[_TOTAL_KEY], self.snapshot())

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        result = super().__torch_dispatch__(func, types, args, kwargs)
        is_copy = func is torch.ops.aten._to_copy.default and isinstance(args[0], torch.Tensor)
        if is_copy and any(st in self._param_storages for st in get_untyped_storages(args[0])):
            self._update_and_maybe_create_winfos(result, _MemRefType.OTH)
        return result
