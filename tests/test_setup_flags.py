"""scripts/setup builds llama.cpp for the CPU's own vector extensions, named one by one, and
never for AMX (the -march=native build crashes on CPUs with AMX)."""
from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
AVX2 = "fpu sse4_2 avx f16c fma bmi2 avx2"
SAPPHIRE = (AVX2 + " avx512f avx512cd avx512vl avx512dq avx512bw avx512vbmi avx512_vnni avx512_bf16"
            " avx_vnni amx_tile amx_int8 amx_bf16")


def cmake_args(tmp_path: Path, flags: str) -> list[str]:
    """What the setup's own function chooses for a CPU with these flags."""
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(f"processor\t: 0\nflags\t\t: {flags}\n")
    script = f'source <(sed -n "/^llama_cmake_args()/,/^}}/p" "{ROOT / "scripts/setup"}"); llama_cmake_args'
    out = subprocess.run(["bash", "-c", script], env={"RT_CPUINFO": str(cpuinfo), "PATH": "/usr/bin:/bin"},
                         check=True, capture_output=True, text=True).stdout
    return out.split()


def test_a_cpu_with_avx512_gets_it_and_never_amx(tmp_path):
    args = cmake_args(tmp_path, SAPPHIRE)
    assert args[0] == "-DGGML_NATIVE=OFF"
    assert {"-DGGML_AVX512=ON", "-DGGML_AVX512_VNNI=ON", "-DGGML_AVX512_BF16=ON", "-DGGML_AVX_VNNI=ON"} <= set(args)
    assert not [a for a in args if "AMX" in a]


def test_a_cpu_without_avx512_gets_the_avx2_build(tmp_path):
    assert cmake_args(tmp_path, AVX2) == ["-DGGML_NATIVE=OFF"]


def test_a_partial_avx512_is_not_enough(tmp_path):
    """GGML_AVX512 compiles with F, CD, VL, DQ and BW: a CPU lacking one of them must not get it."""
    assert "-DGGML_AVX512=ON" not in cmake_args(tmp_path, AVX2 + " avx512f avx512cd")
