"""NVIDIA GPUs people train on, Kepler to Blackwell: data-center, workstation, consumer and export variants.

Each row cites the data sheet (or architecture white paper) its numbers come from; see gpu_specs.py for what the
columns mean. Rows are matched against NVML names in order, so a name that contains another (RTX 4090 D, RTX 4090)
comes first or excludes the longer one in its pattern; tests/probe/test_gpu_table.py checks every row finds itself.
"""

from __future__ import annotations

from functools import partial

from accelwiz.probe.gpu_specs import GpuModel, tf

_NV = "https://www.nvidia.com/en-us"
_TURING = ("https://images.nvidia.com/aem-dam/en-zz/Solutions/design-visualization/technologies/turing-architecture/"
           "NVIDIA-Turing-Architecture-Whitepaper.pdf")
_GA102 = ("https://images.nvidia.com/aem-dam/en-zz/Solutions/geforce/ampere/pdf/"
          "NVIDIA-ampere-GA102-GPU-Architecture-Whitepaper-V1.pdf")
_ADA = "https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf"
_RTX_BLACKWELL = ("https://images.nvidia.com/aem-dam/Solutions/geforce/blackwell/"
                  "nvidia-rtx-blackwell-gpu-architecture.pdf")
_V100 = "https://images.nvidia.com/content/technologies/volta/pdf/volta-v100-datasheet-update-us-1165301-r5.pdf"
_A100 = ("https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/"
         "nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf")
_PASCAL = "https://images.nvidia.com/content/pdf/tesla/whitepaper/pascal-architecture-whitepaper.pdf"

_kepler = partial(GpuModel, arch="Kepler")
_maxwell = partial(GpuModel, arch="Maxwell")
_pascal = partial(GpuModel, arch="Pascal")
_volta = partial(GpuModel, arch="Volta")
_turing = partial(GpuModel, arch="Turing")
_ampere = partial(GpuModel, arch="Ampere")
_ada = partial(GpuModel, arch="Ada Lovelace")
_hopper = partial(GpuModel, arch="Hopper")
_blackwell = partial(GpuModel, arch="Blackwell")

NVIDIA_GPUS: tuple[GpuModel, ...] = (
    # Kepler and Maxwell: current PyTorch CUDA builds no longer ship kernels for them (sm_37 / sm_52)
    _kepler("K80", "Tesla K80", 11441, (3, 7), 0, r"\bK80\b", f"{_NV}/data-center/tesla-k80/", tf(fp32=4.37),
            note="one GPU of the two on a K80 board; PyTorch dropped sm_37 in 1.13"),
    _maxwell("M40-24GB", "Tesla M40 24GB", 22945, (5, 2), 0, r"\bM40\b",
             "https://images.nvidia.com/content/tesla/pdf/nvidia-tesla-m40-datasheet.pdf", tf(fp32=7.0),
             memory_nominal=True),
    # Pascal: no tensor cores, no bf16; P100 has fast fp16 vector math, 6.1 boards fp16 at 1/64 rate
    _pascal("P100-16GB", "Tesla P100-SXM2-16GB", 16280, (6, 0), 4, r"P100-SXM2", _PASCAL,
            tf(fp32=10.6, fp16=21.2), interconnect="NVLink 1 (4 links)"),
    _pascal("P100-PCIE-16GB", "Tesla P100-PCIE-16GB", 16280, (6, 0), 0, r"P100-PCIE-16GB",
            f"{_NV}/data-center/tesla-p100/", tf(fp32=9.3, fp16=18.7)),
    _pascal("P100-PCIE-12GB", "Tesla P100-PCIE-12GB", 12198, (6, 0), 0, r"P100-PCIE-12GB",
            f"{_NV}/data-center/tesla-p100/", tf(fp32=9.3, fp16=18.7)),
    _pascal("P40", "Tesla P40", 22919, (6, 1), 0, r"\bP40\b",
            "https://images.nvidia.com/content/pdf/tesla/184427-Tesla-P40-Datasheet-NV-Final-Letter-Web.pdf",
            tf(fp32=11.8)),
    _pascal("P4", "Tesla P4", 7611, (6, 1), 0, r"\bP4\b",
            "https://images.nvidia.com/content/pdf/tesla/184457-Tesla-P4-Datasheet-NV-Final-Letter-Web.pdf",
            tf(fp32=5.5)),
    _pascal("TITAN-Xp", "NVIDIA TITAN Xp", 12288, (6, 1), 0, r"TITAN Xp", f"{_NV}/titan/titan-xp/",
            tf(fp32=12.1)),
    _pascal("GTX1080Ti", "NVIDIA GeForce GTX 1080 Ti", 11264, (6, 1), 0, r"GTX 1080 Ti",
            f"{_NV}/geforce/graphics-cards/geforce-gtx-1080-ti/specifications/", tf(fp32=11.3)),
    _pascal("GTX1080", "NVIDIA GeForce GTX 1080", 8192, (6, 1), 0, r"GTX 1080(?! Ti)",
            f"{_NV}/geforce/products/10series/geforce-gtx-1080/", tf(fp32=8.9)),
    _pascal("GTX1070", "NVIDIA GeForce GTX 1070", 8192, (6, 1), 0, r"GTX 1070",
            f"{_NV}/geforce/products/10series/geforce-gtx-1070/", tf(fp32=6.5)),
    _pascal("Quadro-P6000", "Quadro P6000", 24449, (6, 1), 0, r"Quadro P6000",
            "https://www.nvidia.com/content/dam/en-zz/Solutions/design-visualization/productspage/quadro/"
            "quadro-desktop/quadro-pascal-p6000-data-sheet-us-nv-704590-r1.pdf", tf(fp32=12.6)),
    # Volta: fp16 tensor cores (fp32 accumulate), no bf16
    _volta("V100-16GB", "Tesla V100-SXM2-16GB", 16160, (7, 0), 6, r"V100-SXM2-16GB", _V100,
           tf(fp32=15.7, fp16=125.0), interconnect="NVLink 2 (6 links)"),
    _volta("V100-PCIE-16GB", "Tesla V100-PCIE-16GB", 16160, (7, 0), 0, r"V100-PCIE-16GB", _V100,
           tf(fp32=14.0, fp16=112.0)),
    _volta("V100-32GB", "Tesla V100-SXM2-32GB", 32510, (7, 0), 6, r"V100-SXM2-32GB", _V100,
           tf(fp32=15.7, fp16=125.0), interconnect="NVLink 2 (6 links)"),
    _volta("V100-SXM3-32GB", "Tesla V100-SXM3-32GB", 32510, (7, 0), 6, r"V100-SXM3-32GB",
           f"{_NV}/data-center/dgx-2/", tf(fp32=15.7, fp16=125.0), interconnect="NVLink 2 (NVSwitch, DGX-2)"),
    _volta("V100-PCIE-32GB", "Tesla V100-PCIE-32GB", 32510, (7, 0), 0, r"V100-PCIE-32GB", _V100,
           tf(fp32=14.0, fp16=112.0)),
    _volta("V100S-32GB", "Tesla V100S-PCIE-32GB", 32510, (7, 0), 0, r"V100S", _V100, tf(fp32=16.4, fp16=130.0)),
    _volta("TITAN-V", "NVIDIA TITAN V", 12066, (7, 0), 0, r"TITAN V\b", f"{_NV}/titan/titan-v/",
           tf(fp32=14.9, fp16=110.0)),
    _volta("Quadro-GV100", "Quadro GV100", 32508, (7, 0), 0, r"Quadro GV100",
           f"{_NV}/design-visualization/quadro/gv100/", tf(fp32=16.7, fp16=118.5)),
    # Turing: fp16 tensor cores (GeForce at half rate with fp32 accumulate); GTX 16xx has none
    _turing("T4", "Tesla T4", 15360, (7, 5), 0, r"\bT4\b",
            "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/tesla-t4/t4-tensor-core-datasheet-951643.pdf",
            tf(fp32=8.1, fp16=65.0)),
    _turing("RTX2080Ti", "NVIDIA GeForce RTX 2080 Ti", 11264, (7, 5), 0, r"RTX 2080 Ti", _TURING,
            tf(fp32=13.4, fp16=53.8)),
    _turing("RTX2080-SUPER", "NVIDIA GeForce RTX 2080 SUPER", 8192, (7, 5), 0, r"RTX 2080 SUPER",
            f"{_NV}/geforce/graphics-cards/rtx-2080-super/", tf(fp32=11.2, fp16=44.6)),
    _turing("RTX2080", "NVIDIA GeForce RTX 2080", 8192, (7, 5), 0, r"RTX 2080(?! Ti| SUPER)", _TURING,
            tf(fp32=10.1, fp16=40.3)),
    _turing("RTX2070", "NVIDIA GeForce RTX 2070", 8192, (7, 5), 0, r"RTX 2070", _TURING, tf(fp32=7.5, fp16=29.9)),
    _turing("RTX2060", "NVIDIA GeForce RTX 2060", 6144, (7, 5), 0, r"RTX 2060", _TURING, tf(fp32=6.5, fp16=25.8)),
    _turing("GTX1660Ti", "NVIDIA GeForce GTX 1660 Ti", 6144, (7, 5), 0, r"GTX 16[56]0",
            f"{_NV}/geforce/graphics-cards/gtx-1660-ti/", tf(fp32=5.4),
            note="Turing without tensor cores: fp16 runs on the CUDA cores"),
    _turing("TITAN-RTX", "NVIDIA TITAN RTX", 24576, (7, 5), 0, r"TITAN RTX",
            f"{_NV}/deep-learning-ai/products/titan-rtx/",
            tf(fp32=16.3, fp16=130.5)),
    _turing("Quadro-RTX8000", "Quadro RTX 8000", 48601, (7, 5), 0, r"Quadro RTX 8000",
            "https://www.nvidia.com/content/dam/en-zz/Solutions/design-visualization/quadro-product-literature/"
            "quadro-rtx-8000-us-nvidia-946977-r1-web.pdf", tf(fp32=16.3, fp16=130.5)),
    _turing("Quadro-RTX6000", "Quadro RTX 6000", 24220, (7, 5), 0, r"Quadro RTX 6000",
            f"{_NV}/design-visualization/quadro/rtx-6000/", tf(fp32=16.3, fp16=130.5)),
    _turing("Quadro-RTX5000", "Quadro RTX 5000", 16125, (7, 5), 0, r"Quadro RTX 5000",
            f"{_NV}/design-visualization/quadro/rtx-5000/", tf(fp32=11.2, fp16=89.2)),
    # Ampere data center (A800: the export variant of A100, NVLink cut to 400 GB/s = 8 links)
    _ampere("A100-40GB", "NVIDIA A100-SXM4-40GB", 40960, (8, 0), 12, r"A100-SXM4-40GB", _A100,
            tf(fp32=19.5, tf32=156.0, fp16=312.0, bf16=312.0), interconnect="NVLink 3 (12 links, NVSwitch)"),
    _ampere("A100-PCIE-40GB", "NVIDIA A100-PCIE-40GB", 40960, (8, 0), 0, r"A100-PCIE-40GB", _A100,
            tf(fp32=19.5, tf32=156.0, fp16=312.0, bf16=312.0)),
    _ampere("A100-80GB", "NVIDIA A100-SXM4-80GB", 81920, (8, 0), 12, r"A100-SXM4-80GB", _A100,
            tf(fp32=19.5, tf32=156.0, fp16=312.0, bf16=312.0), interconnect="NVLink 3 (12 links, NVSwitch)"),
    _ampere("A100-PCIE-80GB", "NVIDIA A100 80GB PCIe", 81920, (8, 0), 0, r"A100 80GB PCIe", _A100,
            tf(fp32=19.5, tf32=156.0, fp16=312.0, bf16=312.0)),
    _ampere("A800-80GB", "NVIDIA A800-SXM4-80GB", 81920, (8, 0), 8, r"A800-SXM4-80GB",
            "https://www.nvidia.cn/data-center/a800/", tf(fp32=19.5, tf32=156.0, fp16=312.0, bf16=312.0),
            interconnect="NVLink 3 (8 links, 400 GB/s)"),
    _ampere("A800-PCIE-80GB", "NVIDIA A800 80GB PCIe", 81920, (8, 0), 0, r"A800 80GB PCIe",
            "https://www.nvidia.cn/data-center/a800/", tf(fp32=19.5, tf32=156.0, fp16=312.0, bf16=312.0)),
    _ampere("A800-40GB", "NVIDIA A800 40GB Active", 40960, (8, 0), 0, r"A800 40GB",
            f"{_NV}/design-visualization/a800/", tf(fp32=19.5, tf32=156.0, fp16=312.0, bf16=312.0)),
    _ampere("A30", "NVIDIA A30", 24576, (8, 0), 0, r"\bA30\b", f"{_NV}/data-center/products/a30-gpu/",
            tf(fp32=10.3, tf32=82.0, fp16=165.0, bf16=165.0)),
    _ampere("A40", "NVIDIA A40", 46068, (8, 6), 0, r"\bA40\b",
            "https://images.nvidia.com/content/Solutions/data-center/a40/nvidia-a40-datasheet.pdf",
            tf(fp32=37.4, tf32=74.8, fp16=149.7, bf16=149.7)),
    _ampere("A10G", "NVIDIA A10G", 23028, (8, 6), 0, r"\bA10G\b", "https://aws.amazon.com/ec2/instance-types/g5/",
            tf(fp32=31.2), note="AWS's A10 variant: NVIDIA publishes no tensor figure for it"),
    _ampere("A10", "NVIDIA A10", 23028, (8, 6), 0, r"\bA10\b(?!G)", f"{_NV}/data-center/products/a10-gpu/",
            tf(fp32=31.2, tf32=62.5, fp16=125.0, bf16=125.0)),
    _ampere("A2", "NVIDIA A2", 15356, (8, 6), 0, r"\bA2\b", f"{_NV}/data-center/products/a2/",
            tf(fp32=4.5, tf32=9.0, fp16=18.0, bf16=18.0)),
    # Ampere workstation (dense tensor = the data sheet's sparse figure / 2)
    _ampere("RTX-A6000", "NVIDIA RTX A6000", 49140, (8, 6), 0, r"RTX A6000", f"{_NV}/design-visualization/rtx-a6000/",
            tf(fp32=38.7, fp16=154.8, bf16=154.8)),
    _ampere("RTX-A5500", "NVIDIA RTX A5500", 24564, (8, 6), 0, r"RTX A5500", f"{_NV}/design-visualization/rtx-a5500/",
            tf(fp32=34.1, fp16=136.4, bf16=136.4)),
    _ampere("RTX-A5000", "NVIDIA RTX A5000", 24564, (8, 6), 0, r"RTX A5000", f"{_NV}/design-visualization/rtx-a5000/",
            tf(fp32=27.8, fp16=111.1, bf16=111.1)),
    _ampere("RTX-A4500", "NVIDIA RTX A4500", 20470, (8, 6), 0, r"RTX A4500", f"{_NV}/design-visualization/rtx-a4500/",
            tf(fp32=23.7, fp16=94.6, bf16=94.6)),
    _ampere("RTX-A4000", "NVIDIA RTX A4000", 16376, (8, 6), 0, r"RTX A4000", f"{_NV}/design-visualization/rtx-a4000/",
            tf(fp32=19.2, fp16=76.7, bf16=76.7)),
    # Ampere consumer (fp16/bf16 with fp32 accumulate: half the fp16-accumulate figure)
    _ampere("RTX3090Ti", "NVIDIA GeForce RTX 3090 Ti", 24564, (8, 6), 0, r"RTX 3090 Ti", _GA102,
            tf(fp32=40.0, fp16=80.0, bf16=80.0)),
    _ampere("RTX3090", "NVIDIA GeForce RTX 3090", 24576, (8, 6), 0, r"RTX 3090(?! Ti)", _GA102,
            tf(fp32=35.6, fp16=71.0, bf16=71.0)),
    _ampere("RTX3080Ti", "NVIDIA GeForce RTX 3080 Ti", 12288, (8, 6), 0, r"RTX 3080 Ti", _GA102,
            tf(fp32=34.1, fp16=68.2, bf16=68.2)),
    _ampere("RTX3080", "NVIDIA GeForce RTX 3080", 10240, (8, 6), 0, r"RTX 3080(?! Ti)", _GA102,
            tf(fp32=29.8, fp16=59.5, bf16=59.5), note="the 12 GB model reports 12288 MiB"),
    _ampere("RTX3070", "NVIDIA GeForce RTX 3070", 8192, (8, 6), 0, r"RTX 3070", _GA102,
            tf(fp32=20.3, fp16=40.6, bf16=40.6)),
    _ampere("RTX3060", "NVIDIA GeForce RTX 3060", 12288, (8, 6), 0, r"RTX 3060", _GA102,
            tf(fp32=12.7, fp16=25.4, bf16=25.4)),
    # Ada data center (L20: export variant) and workstation; fp8 tensor cores
    _ada("L4", "NVIDIA L4", 23034, (8, 9), 0, r"\bL4\b", f"{_NV}/data-center/l4/",
         tf(fp32=30.3, tf32=60.0, fp16=121.0, bf16=121.0, fp8=242.5)),
    _ada("L40S", "NVIDIA L40S", 46068, (8, 9), 0, r"\bL40S\b", f"{_NV}/data-center/l40s/",
         tf(fp32=91.6, tf32=183.0, fp16=362.0, bf16=362.0, fp8=733.0)),
    _ada("L40", "NVIDIA L40", 46068, (8, 9), 0, r"\bL40\b", f"{_NV}/data-center/l40/",
         tf(fp32=90.5, tf32=90.5, fp16=181.0, bf16=181.0, fp8=362.0)),
    _ada("L20", "NVIDIA L20", 46068, (8, 9), 0, r"\bL20\b", "https://www.nvidia.cn/data-center/l20/",
         tf(fp32=59.8, tf32=59.8, fp16=119.5, bf16=119.5, fp8=239.0)),
    _ada("RTX6000-Ada", "NVIDIA RTX 6000 Ada Generation", 49140, (8, 9), 0, r"RTX 6000 Ada",
         f"{_NV}/design-visualization/rtx-6000/", tf(fp32=91.1, fp16=364.2, bf16=364.2, fp8=728.5)),
    _ada("RTX5000-Ada", "NVIDIA RTX 5000 Ada Generation", 32760, (8, 9), 0, r"RTX 5000 Ada",
         f"{_NV}/design-visualization/rtx-5000/", tf(fp32=65.3, fp16=261.1, bf16=261.1, fp8=522.2)),
    _ada("RTX4500-Ada", "NVIDIA RTX 4500 Ada Generation", 24570, (8, 9), 0, r"RTX 4500 Ada",
         f"{_NV}/design-visualization/rtx-4500/", tf(fp32=39.6, fp16=158.5, bf16=158.5, fp8=317.0)),
    _ada("RTX4000-Ada", "NVIDIA RTX 4000 Ada Generation", 20475, (8, 9), 0, r"RTX 4000 Ada",
         f"{_NV}/design-visualization/rtx-4000/", tf(fp32=26.7, fp16=81.8, bf16=81.8, fp8=163.5)),
    # Ada consumer (RTX 4090 D: export variant with 114 of 128 SMs)
    _ada("RTX4090D", "NVIDIA GeForce RTX 4090 D", 24564, (8, 9), 0, r"RTX 4090 ?D\b",
         "https://www.nvidia.cn/geforce/graphics-cards/40-series/rtx-4090-d/",
         tf(fp32=73.5, fp16=147.1, bf16=147.1, fp8=294.2), note="tensor figures scaled from the 4090 by SM count"),
    _ada("RTX4090", "NVIDIA GeForce RTX 4090", 24564, (8, 9), 0, r"RTX 4090(?! ?D\b)", _ADA,
         tf(fp32=82.6, fp16=165.2, bf16=165.2, fp8=330.3)),
    _ada("RTX4080-SUPER", "NVIDIA GeForce RTX 4080 SUPER", 16376, (8, 9), 0, r"RTX 4080 SUPER",
         f"{_NV}/geforce/graphics-cards/40-series/rtx-4080-family/", tf(fp32=52.2, fp16=104.4, bf16=104.4, fp8=208.9)),
    _ada("RTX4080", "NVIDIA GeForce RTX 4080", 16376, (8, 9), 0, r"RTX 4080(?! SUPER)", _ADA,
         tf(fp32=48.7, fp16=97.5, bf16=97.5, fp8=194.9)),
    _ada("RTX4070Ti", "NVIDIA GeForce RTX 4070 Ti", 12282, (8, 9), 0, r"RTX 4070 Ti", _ADA,
         tf(fp32=40.1, fp16=80.2, bf16=80.2, fp8=160.4)),
    _ada("RTX4060Ti-16GB", "NVIDIA GeForce RTX 4060 Ti", 16380, (8, 9), 0, r"RTX 4060 Ti",
         f"{_NV}/geforce/graphics-cards/40-series/rtx-4060-4060ti/", tf(fp32=22.1, fp16=44.2, bf16=44.2, fp8=88.4),
         note="the 8 GB model reports 8188 MiB"),
    # Hopper (H800: export variant, NVLink cut to 400 GB/s; H20: export variant with far fewer tensor FLOPs)
    _hopper("H100-80GB", "NVIDIA H100 80GB HBM3", 81559, (9, 0), 18, r"H100 80GB HBM3", f"{_NV}/data-center/h100/",
            tf(fp32=67.0, tf32=494.7, fp16=989.4, bf16=989.4, fp8=1978.9),
            interconnect="NVLink 4 (18 links, NVSwitch)"),
    _hopper("H100-PCIE", "NVIDIA H100 PCIe", 81559, (9, 0), 0, r"H100 PCIe", f"{_NV}/data-center/h100/",
            tf(fp32=51.0, tf32=378.0, fp16=756.0, bf16=756.0, fp8=1513.0)),
    _hopper("H100-NVL", "NVIDIA H100 NVL", 95830, (9, 0), 0, r"H100 NVL", f"{_NV}/data-center/h100/",
            tf(fp32=60.0, tf32=417.5, fp16=835.5, bf16=835.5, fp8=1670.5), interconnect="PCIe, NVLink bridge pairs"),
    _hopper("H800-80GB", "NVIDIA H800", 81559, (9, 0), 8, r"\bH800\b(?! PCIe)", "https://www.nvidia.cn/data-center/h800/",
            tf(fp32=67.0, tf32=494.7, fp16=989.4, bf16=989.4, fp8=1978.9), interconnect="NVLink 4 (8 links, 400 GB/s)"),
    _hopper("H800-PCIE", "NVIDIA H800 PCIe", 81559, (9, 0), 0, r"H800 PCIe", "https://www.nvidia.cn/data-center/h800/",
            tf(fp32=51.0, tf32=378.0, fp16=756.0, bf16=756.0, fp8=1513.0)),
    _hopper("H20", "NVIDIA H20", 97871, (9, 0), 18, r"\bH20\b", "https://www.nvidia.cn/data-center/h20/",
            tf(fp32=44.0, tf32=74.0, fp16=148.0, bf16=148.0, fp8=296.0), interconnect="NVLink 4 (18 links, NVSwitch)",
            memory_nominal=True),
    _hopper("H200", "NVIDIA H200", 143771, (9, 0), 18, r"\bH200\b(?! NVL)", f"{_NV}/data-center/h200/",
            tf(fp32=67.0, tf32=494.7, fp16=989.4, bf16=989.4, fp8=1978.9),
            interconnect="NVLink 4 (18 links, NVSwitch)"),
    _hopper("H200-NVL", "NVIDIA H200 NVL", 143771, (9, 0), 0, r"H200 NVL", f"{_NV}/data-center/h200/",
            tf(fp32=60.0, tf32=417.5, fp16=835.5, bf16=835.5, fp8=1670.5), interconnect="PCIe, NVLink bridge"),
    _hopper("GH200", "NVIDIA GH200 480GB", 97871, (9, 0), 18, r"\bGH200\b",
            f"{_NV}/data-center/grace-hopper-superchip/", tf(fp32=67.0, tf32=494.7, fp16=989.4, bf16=989.4,
                                                             fp8=1978.9),
            interconnect="NVLink-C2C to Grace, NVLink 4 between superchips", memory_nominal=True),
    # Blackwell data center (dense = the HGX data sheet's sparse figure / 2) and RTX
    _blackwell("B200", "NVIDIA B200", 183359, (10, 0), 18, r"\bB200\b", f"{_NV}/data-center/hgx/",
               tf(fp32=75.0, tf32=1100.0, fp16=2250.0, bf16=2250.0, fp8=4500.0),
               interconnect="NVLink 5 (18 links, NVSwitch)"),
    _blackwell("B300", "NVIDIA B300 SXM6 AC", 294912, (10, 3), 18, r"\bB300\b", f"{_NV}/data-center/hgx/",
               tf(fp32=75.0, tf32=1100.0, fp16=2250.0, bf16=2250.0, fp8=4500.0),
               interconnect="NVLink 5 (18 links, NVSwitch)", memory_nominal=True),
    _blackwell("GB200", "NVIDIA GB200", 189440, (10, 0), 18, r"\bGB200\b", f"{_NV}/data-center/gb200-nvl72/",
               tf(fp32=80.0, tf32=1250.0, fp16=2500.0, bf16=2500.0, fp8=5000.0),
               interconnect="NVLink 5 (18 links, NVL72 switch tray)", memory_nominal=True),
    _blackwell("RTX-PRO-6000", "NVIDIA RTX PRO 6000 Blackwell Workstation Edition", 97887, (12, 0), 0,
               r"RTX PRO 6000", f"{_NV}/products/workstations/professional-desktop-gpus/rtx-pro-6000/",
               tf(fp32=125.0, fp16=503.8, bf16=503.8, fp8=1007.6), note="the Server and Max-Q editions match"),
    _blackwell("RTX5090D", "NVIDIA GeForce RTX 5090 D", 32607, (12, 0), 0, r"RTX 5090 ?D\b",
               "https://www.nvidia.cn/geforce/graphics-cards/50-series/rtx-5090-d/", tf(fp32=104.8),
               note="export variant: NVIDIA lists its AI TOPS lowered, without per-precision tensor figures"),
    _blackwell("RTX5090", "NVIDIA GeForce RTX 5090", 32607, (12, 0), 0, r"RTX 5090(?! ?D\b)", _RTX_BLACKWELL,
               tf(fp32=104.8, fp16=209.5, bf16=209.5, fp8=419.0)),
    _blackwell("RTX5080", "NVIDIA GeForce RTX 5080", 16303, (12, 0), 0, r"RTX 5080", _RTX_BLACKWELL,
               tf(fp32=56.3, fp16=112.6, bf16=112.6, fp8=225.1)),
    _blackwell("RTX5070Ti", "NVIDIA GeForce RTX 5070 Ti", 16303, (12, 0), 0, r"RTX 5070 Ti", _RTX_BLACKWELL,
               tf(fp32=43.9, fp16=87.9, bf16=87.9, fp8=175.8)),
)
