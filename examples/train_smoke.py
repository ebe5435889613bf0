"""A training smoke test: a few steps of a small model, with the checks that answer "where did the
time go" and "where did the numbers go".

    stackcheck --python python3 --app-script examples/train_smoke.py --app-repeat 4 \\
        --collective-ranks 2 --app-trace trace.json --json run.json

- the operator profile of one training step (stackcheck.profile): top operators, operators that
  fell back to the CPU, host-device copies and waits per step (the loss logged with .item() is
  one), recompiles;
- the training watch (stackcheck.train_watch): loss, gradient norms and NaN/Inf per module for
  every step of a fixed input, naming the first step and module that produced NaN/Inf;
- the numerics of one forward (stackcheck.watch), which `stackcheck diff` compares module by
  module with another machine's snapshot, as it compares the training watch step by step;
- the scaling of the step from one device to all (stackcheck.scaling);
- memory after every repetition (--app-repeat) with its fitted growth;
- --collective-ranks / one rank per device: the all-reduce check of the framework layer;
- --app-profile / --app-trace: the whole last repetition under the profiler, as a Chrome trace.

It picks the accelerator torch sees (cuda covers ROCm/DTK builds, npu needs torch_npu), else the
CPU. Environment, for demonstrations and tests:
  SMOKE_DEVICE=cpu       force a device
  SMOKE_NAN_STEP=<n>     make the 'block' module's backward give NaN at step n
"""
import copy
import os

import stackcheck

with stackcheck.stage("import"):
    import torch
    import torch.nn as nn

with stackcheck.stage("device"):
    device = os.environ.get("SMOKE_DEVICE")
    if not device:
        if torch.cuda.is_available():
            device = "cuda"
        elif hasattr(torch, "npu") and torch.npu.is_available():
            device = "npu"
        else:
            device = "cpu"
    print("device", device, "torch", torch.__version__)

NAN_STEP = int(os.environ.get("SMOKE_NAN_STEP", "0"))
ARMED = [False]


class Poison(torch.autograd.Function):
    """Identity forward; NaN gradients in the backward while armed (the injected fault)."""

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        return grad * float("nan") if ARMED[0] else grad


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.linear = nn.Linear(width, width)
        self.act = nn.GELU()

    def forward(self, x):
        return Poison.apply(self.act(self.linear(x)))


with stackcheck.stage("build model"):
    torch.manual_seed(1234)
    model = nn.Sequential()
    model.add_module("embed", nn.Linear(16, 32))
    model.add_module("block", Block(32))
    model.add_module("head", nn.Linear(32, 4))
    model = model.to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    x = stackcheck.fixed_input((64, 16), device=device)
    target = stackcheck.fixed_input((64, 4), seed=1, device=device)


def train_step(step=0):
    ARMED[0] = NAN_STEP > 0 and step == NAN_STEP
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), target)
    loss.backward()
    opt.step()
    return loss


def logged_step():
    """The step as training loops often write it: the loss read on the host every step."""
    loss = train_step()
    return loss.item()


# before training: a NaN step (SMOKE_NAN_STEP) spoils the weights, and the forward pass checked
# here would then name the module the NaN reached, not a fault of its own
with stackcheck.stage("numerics"):
    stackcheck.watch(model, x, name="smoke model")

with stackcheck.stage("profile"):
    stackcheck.profile(logged_step, steps=3, name="train step")

with stackcheck.stage("train"):
    watch = stackcheck.train_watch(train_step, steps=8, model=model, name="smoke")
    losses = [s["loss"] for s in watch["steps"]]
    print("losses", losses)
    if watch["first_nonfinite"] is None:
        stackcheck.metric("final_loss", losses[-1])

with stackcheck.stage("scaling"):
    # one copy of the model and its input per device, made in the untimed warm-up step of each:
    # the devices run at once from threads, which must not move one shared model back and forth
    replicas = {}

    def on(dev):
        if dev not in replicas:
            replicas[dev] = (copy.deepcopy(model).to(dev), x.to(dev))
        net, inputs = replicas[dev]
        with torch.no_grad():
            return net(inputs)

    stackcheck.scaling(on, steps=3)
