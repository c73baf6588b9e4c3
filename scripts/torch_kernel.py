"""Runs torch.compile of the RMSNorm peer (src/peers/torch_peer.py) on one problem, so that its
generated kernel can be read (TORCH_LOGS=output_code) or profiled: the last three calls run inside
the NVTX range "timed" (ncu --nvtx --nvtx-include timed/).

Usage: python3 scripts/torch_kernel.py DTYPE TOKENS HIDDEN [PTX_OUT_DIR]
"""

import glob
import os
import shutil
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src", "peers"))
import torch_peer  # noqa: E402

dtype = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[sys.argv[1]]
tokens, hidden = int(sys.argv[2]), int(sys.argv[3])
x = torch.randn(tokens, hidden, device="cuda").to(dtype)
gamma = torch.rand(hidden, device="cuda").to(dtype)
fn = torch.compile(torch_peer.rmsnorm, dynamic=False)
for _ in range(5):
    fn(x, gamma, 1e-6)
torch.cuda.synchronize()
torch.cuda.nvtx.range_push("timed")
for _ in range(3):
    fn(x, gamma, 1e-6)
torch.cuda.synchronize()
torch.cuda.nvtx.range_pop()
if len(sys.argv) > 4:
    # the PTX Triton generated, newest last: under inductor's cache folder, or Triton's own
    roots = [os.environ.get("TRITON_CACHE_DIR", ""), "/tmp/torchinductor_*/triton", os.path.expanduser("~/.triton/cache")]
    ptx = sorted((p for r in roots if r for p in glob.glob(f"{r}/**/*.ptx", recursive=True)), key=os.path.getmtime)
    for p in ptx[-3:]:
        shutil.copy(p, sys.argv[4])
