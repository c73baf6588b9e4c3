# Attention's peers: scaled_dot_product_attention with each backend torch has (flash,
# memory-efficient, cuDNN) and the math backend, and flex_attention through torch.compile, on
# one set of inputs, [batch, heads, seqlen, head dim] as tilepipe holds them.
from torch_peer import load, versions


def peers(torch, spec, dtype, device):
    a = spec["attention"]
    shape = (a["batch"], a["heads"], a["seqlen"], a["head_dim"])
    numel = shape[0] * shape[1] * shape[2] * shape[3]
    q, k, v = (load(torch, spec[t], numel, dtype, device).view(*shape) for t in ("q", "k", "v"))
    causal = a["causal"]
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.nn.functional import scaled_dot_product_attention as sdpa

    def backend(b):
        def run(q, k, v):
            with sdpa_kernel(b):
                return sdpa(q, k, v, is_causal=causal)

        return run

    version, compiled_version = versions(torch)
    mask = "causal" if causal else "no mask"
    out = {
        f"SDPA, {name}": (backend(b), version, f"scaled_dot_product_attention, {name} backend only ({mask})")
        for name, b in [
            ("flash", SDPBackend.FLASH_ATTENTION),
            ("memory-efficient", SDPBackend.EFFICIENT_ATTENTION),
            ("cuDNN", SDPBackend.CUDNN_ATTENTION),
            ("math", SDPBackend.MATH),
        ]
    }
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    block_mask = None
    if causal:
        block_mask = create_block_mask(lambda b, h, i, j: j <= i, None, None, shape[2], shape[2], device=device)
    flex = torch.compile(flex_attention, dynamic=False)
    out["flex_attention"] = (
        lambda q, k, v: flex(q, k, v, block_mask=block_mask),
        compiled_version,
        f"flex_attention through torch.compile (Triton), {mask}",
    )
    return [(q, k, v)], out
