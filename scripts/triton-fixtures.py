"""Makes tests/fixtures/triton/: Triton cache entries (NAME.json beside NAME.cubin) of the kernels
below, compiled for sm_90 without a GPU by Triton's bundled ptxas through tilepipe.triton.

Usage: python3 scripts/triton-fixtures.py [OUT]   (default OUT: tests/fixtures/triton)
Needs `pip install triton==3.6.0` (the version the committed fixtures name); the other files of
a cache entry (.ttir, .ttgir, .llir, .ptx, .source, __grp__*.json) are left out.
"""

import json
import shutil
import sys
import tempfile
from pathlib import Path

import triton
import triton.language as tl

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))
from tilepipe.triton import compile_kernel  # noqa: E402


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # C = A x B, row-major fp16, one BLOCK_M x BLOCK_N tile of C per program
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a = a_ptr + rm[:, None] * stride_am + rk[None, :]
    b = b_ptr + rk[:, None] * stride_bk + rn[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        left = K - k * BLOCK_K
        x = tl.load(a, mask=rk[None, :] < left, other=0.0)
        y = tl.load(b, mask=rk[:, None] < left, other=0.0)
        acc = tl.dot(x, y, acc)
        a += BLOCK_K
        b += BLOCK_K * stride_bk
    c = c_ptr + rm[:, None] * stride_cm + rn[None, :]
    tl.store(c, acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def matmul_tma_persistent(a_desc, b_desc, c_desc, M, N, K,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                          NUM_SMS: tl.constexpr):
    # persistent: each program walks tiles start, start + NUM_SMS, ...; A, B^T and C through
    # host-side tensor descriptors (TMA)
    start = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    for tile in tl.range(start, tiles_m * tiles_n, NUM_SMS, flatten=True):
        om = (tile // tiles_n) * BLOCK_M
        on = (tile % tiles_n) * BLOCK_N
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for kk in range(k_tiles):
            a = a_desc.load([om, kk * BLOCK_K])
            b = b_desc.load([on, kk * BLOCK_K])
            acc = tl.dot(a, b.T, acc)
        c_desc.store([om, on], acc.to(tl.float16))


@triton.jit
def rowsum_kernel(x_ptr, out_ptr, steps, stride, BLOCK: tl.constexpr):
    # sums `steps` rows per program; the loop asks for a 3-stage pipeline itself
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for i in tl.range(steps, num_stages=3):
        acc += tl.load(x_ptr + (pid * steps + i) * stride + cols).to(tl.float32)
    tl.store(out_ptr + pid * BLOCK + cols, acc)


@triton.jit
def chase_kernel(x_ptr, out_ptr, steps, stride, BLOCK: tl.constexpr):
    # the next row is the sum of the row just loaded: no load can start before the previous
    # one has landed, so the 3 stages asked for cannot be kept
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    row = pid
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for _ in tl.range(steps, num_stages=3):
        x = tl.load(x_ptr + row * stride + cols).to(tl.float32)
        acc += x
        row = tl.sum(x, axis=0).to(tl.int32)
    tl.store(out_ptr + pid * BLOCK + cols, acc)


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, y_ptr, stride, N, eps, BLOCK: tl.constexpr):
    # one row per program, no loop: nothing for num_stages to pipeline
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    x = tl.load(x_ptr + row * stride + cols, mask=m, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=m, other=0.0).to(tl.float32)
    r = tl.rsqrt(tl.sum(x * x, axis=0) / N + eps)
    tl.store(y_ptr + row * stride + cols, (x * r * w).to(tl.float16), mask=m)


MATMUL_SIG = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32",
              "K": "i32", "stride_am": "i32", "stride_bk": "i32", "stride_cm": "i32",
              "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr"}
MATMUL_DIV = ["a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_bk", "stride_cm"]
MATMUL_TILE = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32}
ROW_SIG = {"x_ptr": "*fp16", "out_ptr": "*fp32", "steps": "i32", "stride": "i32",
           "BLOCK": "constexpr"}

# folder -> (kernel, signature, constexprs, divisible, options)
FIXTURES = {
    "matmul-s3": (matmul_kernel, MATMUL_SIG, MATMUL_TILE, MATMUL_DIV,
                  dict(num_stages=3, num_warps=4)),
    "matmul-s1": (matmul_kernel, MATMUL_SIG, MATMUL_TILE, MATMUL_DIV,
                  dict(num_stages=1, num_warps=4)),
    "matmul-tma-persistent": (
        matmul_tma_persistent,
        {"a_desc": "tensordesc<fp16[128, 64]>", "b_desc": "tensordesc<fp16[128, 64]>",
         "c_desc": "tensordesc<fp16[128, 128]>", "M": "i32", "N": "i32", "K": "i32",
         "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr",
         "NUM_SMS": "constexpr"},
        {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "NUM_SMS": 132}, [],
        dict(num_stages=3, num_warps=8)),
    "rowsum-s3": (rowsum_kernel, ROW_SIG, {"BLOCK": 1024}, ["x_ptr", "out_ptr", "stride"],
                  dict(num_stages=3, num_warps=4)),
    "chase-s3": (chase_kernel, ROW_SIG, {"BLOCK": 1024}, ["x_ptr", "out_ptr", "stride"],
                 dict(num_stages=3, num_warps=4)),
    "rmsnorm-s3": (
        rmsnorm_kernel,
        {"x_ptr": "*fp16", "w_ptr": "*fp16", "y_ptr": "*fp16", "stride": "i32", "N": "i32",
         "eps": "fp32", "BLOCK": "constexpr"},
        {"BLOCK": 4096}, ["x_ptr", "w_ptr", "y_ptr", "stride"], dict(num_stages=3, num_warps=8)),
}


def main():
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "tests" / "fixtures" / "triton"
    for folder, (fn, sig, consts, div, opts) in FIXTURES.items():
        with tempfile.TemporaryDirectory() as cache:
            compile_kernel(fn, sig, consts, divisible=div, arch=90, out=cache, **opts)
            (entry,) = [p for p in Path(cache).iterdir() if p.is_dir()]
            name = fn.__name__
            meta = json.loads((entry / f"{name}.json").read_text())
            # the one machine-specific field: where libdevice lay
            meta.pop("extern_libs", None)
            dest = out / folder
            dest.mkdir(parents=True, exist_ok=True)
            (dest / f"{name}.json").write_text(json.dumps(meta, indent=1) + "\n")
            shutil.copyfile(entry / f"{name}.cubin", dest / f"{name}.cubin")
            print(f"{folder}: {name} num_stages={meta['num_stages']} shared={meta['shared']} "
                  f"triton {meta['triton_version']}")


if __name__ == "__main__":
    main()
