# tilepipe's PyTorch peers: the run's problem through torch, on the GPU, inputs and timing rules
# tilepipe uses, so their rows sit beside its own variants. What the peers compute is the
# workload's: tilepipe writes its `workload_peers.py` beside this script, whose
# peers(torch, spec, dtype, device) returns the inputs (rotated buffer sets) and the peers,
# name -> (function, version, math in words).
#
# Protocol (one JSON object per line): tilepipe writes the spec on stdin; this script answers
# {"event": "outputs", ...} once each peer's output for the untimed input is written to a file;
# tilepipe validates those and answers {"time": [names]}; this script times the named peers and
# answers {"event": "timings", ...}. A peer that cannot run carries its reason ("skip"); when
# torch itself is missing the answer is {"event": "skip", "reason": ...}.
import json
import sys
import time


def say(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def load(torch, path, numel, dtype, device):
    return torch.from_file(path, shared=False, size=numel, dtype=dtype).to(device)


def store(torch, path, t):
    # the file mapped shared: the copy from the device lands in it, no host-side staging
    flat = t.contiguous().view(torch.uint8).reshape(-1)
    with open(path, "wb") as f:
        f.truncate(flat.numel())
    torch.from_file(path, shared=True, size=flat.numel(), dtype=torch.uint8).copy_(flat)


def cycles_per_ms(torch):
    """The rate of torch.cuda._sleep's clock, measured: it counts SM cycles, not time."""
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    torch.cuda._sleep(2_000_000)
    b.record()
    torch.cuda.synchronize()
    return 2_000_000 / a.elapsed_time(b)


def hold_for(submit_s):
    """tilepipe's hold_for: twice a batch's submission time, within 100 us..100 ms (in ms)."""
    return min(max(2e3 * submit_s, 0.1), 100.0)


def time_peer(torch, fn, inputs, spec):
    """tilepipe's time_with: warm-up, then batches of 10 back-to-back launches between events,
    each batch submitted while the device is held so that no sample waits for the host, host
    submission per launch beside them, until enough samples agree or the budget is spent."""
    t = spec["timing"]
    rate = cycles_per_ms(torch)
    warm = time.perf_counter()
    for i in range(t["warmup"]):
        fn(*inputs[i % len(inputs)])
    per_launch = (time.perf_counter() - warm) / max(t["warmup"], 1)
    torch.cuda.synchronize()
    batch = 10
    hold_ms = hold_for(per_launch * batch)
    events = [torch.cuda.Event(enable_timing=True) for _ in range(batch + 1)]
    device_ms, host_us, host_bound = [], [], 0
    start, n = time.perf_counter(), 0
    while n < t["max_repeats"]:
        torch.cuda._sleep(int(hold_ms * rate))
        events[0].record()
        submit = time.perf_counter()
        for b in range(batch):
            if events[b].query():  # the device waits for this launch: the sample holds host time
                host_bound += 1
            t0 = time.perf_counter()
            fn(*inputs[(n + b) % len(inputs)])
            host_us.append((time.perf_counter() - t0) * 1e6)
            events[b + 1].record()
        hold_ms = hold_for(time.perf_counter() - submit)
        torch.cuda.synchronize()
        device_ms.extend(events[b].elapsed_time(events[b + 1]) for b in range(batch))
        n += batch
        mean = sum(device_ms) / len(device_ms)
        var = sum((s - mean) ** 2 for s in device_ms) / max(len(device_ms) - 1, 1)
        rel = (var**0.5) / mean if mean > 0 else 0.0
        if n >= t["min_repeats"] and (rel <= t["target_rel_stdev"] or time.perf_counter() - start > t["budget_s"]):
            break
    return {"device_ms": device_ms, "host_submit_us": host_us, "warmup": t["warmup"], "buffer_sets": len(inputs),
            "host_bound_samples": host_bound}


def versions(torch):
    version = f"torch {torch.__version__}"
    try:
        import triton

        return version, f"{version}, triton {triton.__version__}"
    except Exception:  # noqa: BLE001
        return version, version


def main():
    spec = json.loads(sys.stdin.readline())
    try:
        import torch
    except Exception as e:  # noqa: BLE001 - any import failure is a reason to skip
        say({"event": "skip", "reason": f"{sys.executable}: cannot import torch ({type(e).__name__}: {e})"})
        return
    if not torch.cuda.is_available():
        say({"event": "skip", "reason": f"torch {torch.__version__}: torch.cuda.is_available() is False"})
        return
    device = torch.device("cuda", spec["device"])
    torch.cuda.set_device(device)
    dtype = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[spec["dtype"]]
    import workload_peers

    inputs, peers = workload_peers.peers(torch, spec, dtype, device)
    outputs, ready = [], {}
    for name, (f, ver, how) in peers.items():
        entry = {"name": name, "version": ver, "math": how}
        try:
            out = f(*inputs[0])
            torch.cuda.synchronize()
            path = f"{spec['out_dir']}/{name.replace(' ', '-')}.bin"
            store(torch, path, out)
            entry["out"] = path
            ready[name] = f
            del out
        except Exception as e:  # noqa: BLE001 - the reason travels to the report
            entry["skip"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        outputs.append(entry)
    say({"event": "outputs", "peers": outputs})
    # one request per peer, until tilepipe closes stdin: it reads the GPU's clocks around each
    for line in sys.stdin:
        timings = []
        for name in json.loads(line)["time"]:
            try:
                timings.append({"name": name, **time_peer(torch, ready[name], inputs, spec)})
            except Exception as e:  # noqa: BLE001
                timings.append({"name": name, "error": f"{type(e).__name__}: {e}"})
        say({"event": "timings", "peers": timings})


if __name__ == "__main__":
    main()
