"""panama_torch: PyTorch training through a PANAMA-style aggregation accelerator (docs/torch.md).

    import panama_torch                      # registers the c10d backend "panama"
    dist.init_process_group("panama")        # RANK, WORLD_SIZE, MASTER_ADDR/PORT + PANAMA_* settings

all_reduce (SUM or AVG) of a CPU tensor of the design's format runs through the accelerator,
asynchronously on the backend's own thread; every other collective, op or dtype goes to an
internal Gloo group (one log line per distinct reason). When the accelerator fails mid-job (or
answers no start-up probe), every rank moves to the Gloo group at the same request (one log
line) and returns to the accelerator when a later re-join probe is exact on every rank
(PANAMA_FALLBACK=off: the failure raises PanamaError instead). Errors of ATen or Gloo keep their
own type and message.

For jobs that keep Gloo as their process group, the DDP communication hook:

    state = panama_torch.HookState()         # reads PANAMA_*, checks path and design
    model.register_comm_hook(state, panama_torch.allreduce_hook)
"""
import atexit
import sys

import torch
import torch.distributed as dist

from . import _C
from ._C import Channel, Config, PanamaError, ProcessGroupPanama, backends, variables

__all__ = ["Channel", "Config", "PanamaError", "ProcessGroupPanama", "HookState", "allreduce_hook", "compress_hook",
           "compressed_allreduce", "allreduce", "backends", "variables", "open_channel"]

BACKEND = "panama"


def _log(msg):
    print(f"panama_torch: {msg}", file=sys.stderr, flush=True)


def _config():
    """The validated configuration (PanamaError naming the variable otherwise); unknown PANAMA_* names are logged."""
    cfg = Config.from_env()
    for name in cfg.unknown_env:
        _log(f"{name} is not a setting of panama_torch (ignored; panama_torch.variables() lists them)")
    return cfg


def open_channel(rank, world_size, config=None):
    """The job's channel in this process (shared by the process group and HookState)."""
    return Channel(config or _config(), rank, world_size)


def _create_process_group(store, rank, world_size, timeout):
    # Everything is checked before the first collective: the settings, the link (opened here, so
    # the job's group is joined before any peer's probe), the Gloo group (its rendezvous means
    # every peer has opened its link too), then the probe through the accelerator.
    cfg = _config()
    if timeout is not None:
        # c10d's timeout (init_process_group(timeout=...), 30 min by default) bounds every call:
        # a peer late by less than that is waited for (docs/torch.md "Timeouts").
        cfg.with_group_timeout(max(1, int(timeout.total_seconds() * 1000)))
    chan = Channel(cfg, rank, world_size)
    gloo = dist.ProcessGroupGloo(dist.PrefixStore("panama/gloo", store), rank, world_size, timeout)
    # The ranks agree on every request's outcome through the store: an accelerator failure moves
    # all of them to the Gloo group at the same request, and re-join probes bring them back
    # (PANAMA_FALLBACK, PANAMA_REJOIN_EVERY; docs/torch.md "Fallback and re-join").
    pg = ProcessGroupPanama(chan, gloo, dist.PrefixStore("panama/agree", store))
    if cfg.probe:
        chan.probe()
    return pg


if BACKEND.upper() not in dist.Backend._plugins:
    dist.Backend.register_backend(BACKEND, _create_process_group)
# Requests still queued or running at exit complete (and free their tensors) while the interpreter
# is whole; after that the channel's thread never needs Python (docs/torch.md "Shutdown").
atexit.register(_C._drain_at_exit)


class HookState:
    """The state of allreduce_hook: the job's channel and the group for what the accelerator cannot sum.

    process_group: the DDP model's group (default: the default group). When it is the "panama"
    process group its channel is used; otherwise (Gloo, ...) a channel is opened from the PANAMA_*
    settings for this rank and checked with the start-up probe after a barrier on that group.
    """

    def __init__(self, process_group=None):
        pg = process_group if process_group is not None else dist.distributed_c10d._get_default_group()
        self.process_group = pg
        if isinstance(pg, ProcessGroupPanama):
            self.channel = pg.channel
            return
        cfg = _config()
        self.channel = Channel(cfg, pg.rank(), pg.size())
        if cfg.fallback:
            # The ranks agree through the default store; an accelerator failure moves the hook's
            # buckets to this group's all_reduce (docs/torch.md "Fallback and re-join").
            store = dist.distributed_c10d._get_default_store()
            self.channel.enable_fallback(dist.PrefixStore("panama/hook-agree", store))
        dist.barrier(group=pg)  # every peer's link is open before the first contribution
        if cfg.probe:
            self.channel.probe()


_default_state = None


def _state(state):
    global _default_state
    if state is None:
        if _default_state is None:
            _default_state = HookState()
        state = _default_state
    return state


def _through_channel(state, t, mean):
    """t summed (mean: averaged) in place through the accelerator: a future of [t]. On the "panama"
    group this is the group's own all_reduce, so that an accelerator failure falls back to its
    Gloo group like every other request (docs/torch.md "Fallback and re-join")."""
    if isinstance(state.process_group, ProcessGroupPanama):
        op = dist.ReduceOp.AVG if mean else dist.ReduceOp.SUM
        return dist.all_reduce(t, op=op, group=state.process_group, async_op=True).get_future()
    return state.channel.allreduce_or_gloo(t, mean, state.process_group).get_future()


def allreduce(state, t, mean=False):
    """t summed (mean: averaged) in place through the job's channel, as the hooks do it (with their
    fallback to Gloo): a future of [t]. state: a HookState, or None for the default group."""
    state = _state(state)
    why = state.channel.unsupported(t)
    if why:
        raise ValueError(f"panama: {why}")
    return _through_channel(state, t, mean)


def allreduce_hook(state, bucket):
    """DDP communication hook: the bucket's mean through the accelerator, returned as a future at once.

    The transfer runs on the backend's thread while the backward pass goes on; the division by the
    world size happens as the sums are written back (no second pass). A bucket the accelerator
    cannot sum (another dtype) goes to state.process_group's all_reduce (logged once).
    state: a HookState, or None for the default group (which must then be the "panama" group).
    """
    state = _state(state)
    t = bucket.buffer()
    why = state.channel.unsupported(t)
    if not why:
        # DDP (1.13) takes a Python object as the hook's result: the bucket, once the Work's
        # future ([bucket]) completes (the callback runs on the channel's thread, with the GIL).
        return _through_channel(state, t, True).then(_bucket)
    _C.log_once(f"DDP hook: {why}")
    world = state.process_group.size()
    fut = dist.all_reduce(t, group=state.process_group, async_op=True).get_future()
    return fut.then(lambda f: f.value()[0].div_(world))


def _bucket(fut):
    return fut.value()[0]


_FORMATS = {"bf16": torch.bfloat16, "fp16": torch.float16}


def compressed_allreduce(state, t):
    """The mean of an fp32 tensor through a 16-bit design: t rounded once to the design's format
    (ATen's conversion, to nearest even), summed by the accelerator in that format, widened back
    to fp32 and divided by the world size there (IEEE float32), written into t. A future of [t].
    On an fp32 design it is the plain mean through the accelerator."""
    state = _state(state)
    fmt = state.channel.config.format
    if fmt not in _FORMATS or t.dtype != torch.float32:
        return _through_channel(state, t, True)
    world = state.process_group.size()
    c = t.to(_FORMATS[fmt])

    def widen(fut):
        t.copy_(fut.value()[0]).div_(world)
        return [t]

    return _through_channel(state, c, False).then(widen)


def compress_hook(state, bucket):
    """DDP communication hook like torch's bf16_compress_hook for a bf16 or fp16 design: every fp32
    gradient rounded once to the design's format, summed on the accelerator, widened back and
    divided by the world size (compressed_allreduce). Other buckets as allreduce_hook."""
    state = _state(state)
    t = bucket.buffer()
    if t.dtype == torch.float32 and state.channel.config.format in _FORMATS:
        return compressed_allreduce(state, t).then(lambda f: f.value()[0])
    return allreduce_hook(state, bucket)
