# The GEMM's peers: torch's matmul (cuBLAS underneath) and Triton's, picked by torch.compile's
# autotuning, on one set of inputs, hot in L2 as tilepipe times its GEMMs.
from torch_peer import load, versions


def matmul(a, b):
    return a @ b


def peers(torch, spec, dtype, device):
    g = spec["gemm"]
    a = load(torch, spec["a"], g["m"] * g["k"], dtype, device).view(g["m"], g["k"])
    b = load(torch, spec["b"], g["k"] * g["n"], dtype, device)
    # B [N x K] (weights) is used transposed, as a view: no copy
    b = b.view(g["k"], g["n"]) if g["layout"] == "kn" else b.view(g["n"], g["k"]).t()
    # f32 accumulation throughout, as tilepipe's kernels and its cuBLAS call do
    m = torch.backends.cuda.matmul
    m.allow_tf32 = False
    m.allow_bf16_reduced_precision_reduction = False
    m.allow_fp16_reduced_precision_reduction = False
    version, compiled_version = versions(torch)
    options = {"max_autotune": True, "max_autotune_gemm_backends": "TRITON", "triton.cudagraphs": False}
    precision = "TF32 and reduced-precision reductions off"
    return [(a, b)], {
        "torch.matmul": (matmul, version, f"a @ b in the run's precision ({precision})"),
        "torch.compile, Triton matmul": (
            torch.compile(matmul, dynamic=False, options=options),
            compiled_version,
            f"torch.compile with max_autotune and Triton as the only GEMM backend ({precision})",
        ),
    }
