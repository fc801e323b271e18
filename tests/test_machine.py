"""The machine a run was made on, read from /proc/cpuinfo (camel_utils/machine.py)."""

from camel_utils.machine import cpu_kind, cpu_model, cpu_simd

# two cores of a VM that has AVX2 and FMA but no AVX-512; the flags line's order is not SIMD_FLAGS' order
CORE = "vendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 1\nmodel name\t: AMD EPYC\nflags\t\t: fpu sse2 fma avx2 sse4_2 avx pclmulqdq\n\n"


def test_the_cpu_is_named_by_its_model_family_and_the_vector_instruction_sets_from_cpuinfo(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\n" + CORE + "processor\t: 1\n" + CORE)
    # "model" is its own key, not the start of "model name"
    assert cpu_model(str(cpuinfo)) == "AMD EPYC"
    assert cpu_simd(str(cpuinfo)) == ["sse4_2", "avx", "avx2", "fma"]
    assert cpu_kind(str(cpuinfo)) == {"family": 25, "model": 1, "simd": ["sse4_2", "avx", "avx2", "fma"]}


def test_a_machine_without_cpuinfo_gives_no_numbers_and_no_flags(tmp_path):
    missing = str(tmp_path / "missing")
    assert cpu_simd(missing) == [] and cpu_kind(missing) == {"family": None, "model": None, "simd": []}
    assert cpu_model(missing)  # platform's word for it
