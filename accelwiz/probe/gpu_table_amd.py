"""AMD Instinct accelerators (CDNA 1 to 4) with ROCm's precision support; see gpu_specs.py for the columns.

Names are the market names AMD SMI reports (`amdsmi_get_gpu_asic_info(...)["market_name"]`). An MI250/MI250X is
two GCDs that ROCm shows as two devices of 64 GB each: a row is one device, as the probe and torch see it.
`nvlink_links` counts Infinity Fabric (xGMI) links to the other GPUs of the node.
"""

from __future__ import annotations

from functools import partial

from accelwiz.probe.gpu_specs import AMD_CAPABILITY, GpuModel, tf

_AMD = "https://www.amd.com/en/products/accelerators/instinct"


def _amd(key: str, name: str, memory_mib: int, gfx: str, links: int, pattern: str, source: str,
         tflops: dict[str, float], **extra: object) -> GpuModel:
    return GpuModel(key, name, memory_mib, AMD_CAPABILITY[gfx], links, pattern, source, tflops,  # type: ignore[arg-type]
                    vendor="amd", arch=gfx, **extra)


_fabric = partial(_amd, memory_nominal=True)

AMD_GPUS: tuple[GpuModel, ...] = (
    _fabric("MI100", "AMD Instinct MI100", 32768, "gfx908", 3, r"\bMI100\b", f"{_AMD}/mi100.html",
            tf(fp32=23.1, fp16=184.6, bf16=92.3), interconnect="Infinity Fabric (3 links)"),
    _fabric("MI210", "AMD Instinct MI210", 65536, "gfx90a", 3, r"\bMI210\b", f"{_AMD}/mi200/mi210.html",
            tf(fp32=22.6, fp16=181.0, bf16=181.0), interconnect="Infinity Fabric bridge (3 links)"),
    _fabric("MI250X", "AMD Instinct MI250X", 65536, "gfx90a", 8, r"\bMI250X\b", f"{_AMD}/mi200/mi250x.html",
            tf(fp32=23.95, fp16=191.5, bf16=191.5), interconnect="Infinity Fabric (8 links per OAM)",
            note="one GCD (half of the OAM module): ROCm shows two devices per MI250X"),
    _fabric("MI250", "AMD Instinct MI250", 65536, "gfx90a", 6, r"\bMI250\b(?!X)", f"{_AMD}/mi200/mi250.html",
            tf(fp32=22.6, fp16=181.0, bf16=181.0), interconnect="Infinity Fabric (6 links per OAM)",
            note="one GCD (half of the OAM module): ROCm shows two devices per MI250"),
    _fabric("MI300X", "AMD Instinct MI300X", 196608, "gfx942", 7, r"\bMI300X\b", f"{_AMD}/mi300/mi300x.html",
            tf(fp32=163.4, tf32=653.7, fp16=1307.4, bf16=1307.4, fp8=2614.9),
            interconnect="Infinity Fabric (7 links, all-to-all in 8)"),
    _fabric("MI300A", "AMD Instinct MI300A", 131072, "gfx942", 4, r"\bMI300A\b", f"{_AMD}/mi300/mi300a.html",
            tf(fp32=122.6, tf32=490.3, fp16=980.6, bf16=980.6, fp8=1961.2),
            interconnect="Infinity Fabric (4 links)", note="APU: the 128 GB HBM3 is shared with the CPU cores"),
    _fabric("MI325X", "AMD Instinct MI325X", 262144, "gfx942", 7, r"\bMI325X\b", f"{_AMD}/mi300/mi325x.html",
            tf(fp32=163.4, tf32=653.7, fp16=1307.4, bf16=1307.4, fp8=2614.9),
            interconnect="Infinity Fabric (7 links, all-to-all in 8)"),
    _fabric("MI355X", "AMD Instinct MI355X", 294912, "gfx950", 7, r"\bMI355X\b", f"{_AMD}/mi350/mi355x.html",
            tf(fp32=157.3, fp16=2516.6, bf16=2516.6, fp8=5033.2),
            interconnect="Infinity Fabric (7 links, all-to-all in 8)"),
    _fabric("MI350X", "AMD Instinct MI350X", 294912, "gfx950", 7, r"\bMI350X\b", f"{_AMD}/mi350/mi350x.html",
            tf(fp32=144.2, fp16=2306.9, bf16=2306.9, fp8=4613.7),
            interconnect="Infinity Fabric (7 links, all-to-all in 8)"),
)
