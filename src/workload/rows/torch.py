# The row workloads' peers: `compute` (and any `EXTRA` spellings) of the body defined above this
# text, eager and under torch.compile, on the same strided, offset view of the same bytes.
from torch_peer import load, versions


def peers(torch, spec, dtype, device):
    v = spec["view"]
    eps = spec["eps"] if spec["eps"] is not None else 0.0
    buf = load(torch, spec["x"], v["alloc"], dtype, device)
    gamma = load(torch, spec["aux"], v["hidden"], dtype, device) if spec.get("aux") else None
    # extra copies rotate past the L2 as tilepipe's buffer sets do
    bufs = [buf] + [buf.clone() for _ in range(spec["buffer_sets"] - 1)]
    inputs = [(torch.as_strided(b, (v["tokens"], v["hidden"]), (v["row_stride"], 1), v["offset"]), gamma, eps) for b in bufs]
    version, compiled_version = versions(torch)
    found = {
        "torch eager": (compute, version, "eager: f32 math, one rounding at the end"),
        "torch.compile": (torch.compile(compute, dynamic=False), compiled_version, "torch.compile(dynamic=False) of the f32-math function, default mode"),
    }
    for name, (fn, math) in EXTRA.items():
        found[name] = (fn, version, math)
    return inputs, found
