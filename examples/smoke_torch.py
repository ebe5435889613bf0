"""A staged PyTorch smoke test: the smallest real step of an application, grown step by step.

    stackcheck --python python3 --app-script examples/smoke_torch.py [--app-repeat 5]

Each step is a stage with its own status, duration and output in the snapshot; the small forward
records every module's output statistics for a fixed input (the numerics watch), so
`stackcheck diff` can name the first module whose output drifts between two machines.

It picks the accelerator torch sees (cuda covers ROCm/DTK builds, npu needs torch_npu) and falls
back to the CPU. Environment, for demonstrations and tests:
  SMOKE_DEVICE=cpu         force a device
  SMOKE_PERTURB=<module>   add 0.5 to that module's weights ("encoder.0", "head")
  SMOKE_NAN=<module>       put a NaN into that module's weights
"""
import os

import stackcheck

with stackcheck.stage("import"):
    import torch
    import torch.nn as nn
    print("torch", torch.__version__, "hip", getattr(torch.version, "hip", None))

with stackcheck.stage("device tensor"):
    device = os.environ.get("SMOKE_DEVICE")
    if not device:
        if torch.cuda.is_available():
            device = "cuda"
        elif hasattr(torch, "npu") and torch.npu.is_available():
            device = "npu"
        else:
            device = "cpu"
    x = torch.arange(8, device=device, dtype=torch.float32)
    got = (x * 2).cpu().tolist()
    assert got == [float(2 * i) for i in range(8)], "device tensor round trip gave %r" % got
    print("device", device, got)

with stackcheck.stage("config"):
    config = {"in_features": 16, "hidden": 32, "out_features": 4, "blocks": 2, "seed": 1234}


class SmokeNet(nn.Module):
    """A small model with named parts, so the numerics name modules a person can find."""

    def __init__(self, cfg, device=None):
        super().__init__()
        hidden = cfg["hidden"]
        self.encoder = nn.Sequential(nn.Linear(cfg["in_features"], hidden, device=device),
                                     nn.GELU())
        self.blocks = nn.ModuleList(
            nn.Sequential(nn.LayerNorm(hidden, device=device),
                          nn.Linear(hidden, hidden, device=device), nn.Tanh())
            for _ in range(cfg["blocks"]))
        self.head = nn.Linear(hidden, cfg["out_features"], device=device)

    def forward(self, inputs):
        h = self.encoder(inputs)
        for block in self.blocks:
            h = h + block(h)
        return self.head(h)


with stackcheck.stage("build model"):
    # Without weights: parameters on the meta device take no memory and no time, like a large
    # model's skeleton before its checkpoint is read.
    model = SmokeNet(config, device="meta")


def make_weights(cfg):
    """The 'checkpoint': the same numbers on every machine for one seed."""
    gen = torch.Generator().manual_seed(cfg["seed"])
    reference = SmokeNet(cfg)
    state = {}
    for name, tensor in reference.state_dict().items():
        state[name] = torch.randn(tensor.shape, generator=gen) * 0.2
    return state


with stackcheck.stage("load weights"):
    state = make_weights(config)
    for env, change in (("SMOKE_PERTURB", "perturb"), ("SMOKE_NAN", "nan")):
        target = os.environ.get(env)
        if not target:
            continue
        key = target + ".weight"
        if key not in state:
            raise KeyError("%s=%s: no such module weight (%s)" % (env, target, ", ".join(state)))
        if change == "perturb":
            state[key] = state[key] + 0.5
        else:
            state[key] = state[key].clone()
            state[key].view(-1)[0] = float("nan")
        print("changed", key, "(%s)" % change)
    model = model.to_empty(device=device)
    model.load_state_dict(state)
    model.eval()

with stackcheck.stage("one operator"):
    gen = torch.Generator().manual_seed(7)
    a = torch.randn(64, 64, generator=gen)
    expected = a @ a.T
    got = (a.to(device) @ a.to(device).T).cpu()
    err = (got - expected).abs().max().item()
    stackcheck.metric("matmul_max_abs_error", err)
    assert err < 1e-3, "matmul on %s differs from the CPU by %g" % (device, err)

with stackcheck.stage("small forward"):
    inputs = stackcheck.fixed_input((8, config["in_features"]), seed=0, device=device)
    out = stackcheck.watch(model, inputs, name="SmokeNet")
    stackcheck.metric("output_mean", out.float().mean().item())
    print("output", tuple(out.shape), "finite", bool(torch.isfinite(out).all()))
