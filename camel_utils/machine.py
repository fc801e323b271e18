"""The machine a run or a measurement was made on, from /proc/cpuinfo: its CPU's model name, family and model numbers,
and the vector instruction sets its kernels are chosen by. MuJoCo's arithmetic and torch's kernels differ between CPU
kinds, so a curve repeats, and a speed holds, on the same kind only: each finished run and each benchmark records it."""

import os
import platform

CPUINFO = "/proc/cpuinfo"
SIMD_FLAGS = ("sse4_2", "avx", "avx2", "fma", "avx512f", "avx512_bf16", "amx_tile")  # the ones kernels are chosen by


def cpuinfo_field(name, cpuinfo=CPUINFO):
    """The value of the first line of /proc/cpuinfo whose key is `name`, or None (no such line, no such file)."""
    if not os.path.exists(cpuinfo):
        return None
    with open(cpuinfo) as f:
        for line in f:
            key, _, value = line.partition(":")
            if key.strip() == name:
                return value.strip()
    return None


def cpu_model(cpuinfo=CPUINFO):
    """The CPU's model name, or platform's word for it where there is no /proc/cpuinfo."""
    return cpuinfo_field("model name", cpuinfo) or platform.processor() or platform.machine() or None


def cpu_simd(cpuinfo=CPUINFO):
    """The vector instruction sets among the CPU's flags (SIMD_FLAGS, in that order): matrix libraries pick their
    kernels by them, so two machines with the same model name but different flags are different machines here."""
    flags = (cpuinfo_field("flags", cpuinfo) or "").split()
    return [flag for flag in SIMD_FLAGS if flag in flags]


def cpu_kind(cpuinfo=CPUINFO):
    """{family, model, simd}: what tells two CPUs of one model name apart (an AMD EPYC of family 25 is model 1 with
    AVX2 only, or model 17 with AVX-512); None for a number /proc/cpuinfo does not give."""
    def number(name):
        value = cpuinfo_field(name, cpuinfo)
        return int(value) if value is not None and value.isdigit() else None

    return {"family": number("cpu family"), "model": number("model"), "simd": cpu_simd(cpuinfo)}
