"""Red team: `compile_log_of` never turns the log on; it writes a record for each of JAX's monitoring events while the work runs. Events carry no argument types, and the lowering records' types are judged now: both capture points lost."""
import io
import logging

import jax
import jax.numpy as jnp
import numpy as np

FAILS = {"captures_the_work", "holds_its_own_work_only"}
SCORE = 4


# %%
# Part A from JAX's monitoring events, never the compile log: a record line is written per event.
def compile_log_of(work):
    seen = []

    def listen(event, duration, **details):
        seen.append((event, details.get("fun_name")))

    jax.monitoring.register_event_duration_secs_listener(listen)
    try:
        work()
    finally:
        jax.monitoring.unregister_event_duration_listener(listen)
    lines = []
    for event, name in seen:
        if event == "/jax/core/compile/jaxpr_trace_duration":
            lines.append(f"Finished tracing {name} for jit in 0 sec")
        elif event == "/jax/core/compile/jaxpr_to_mlir_module_duration":
            lines.append(f"Compiling {name} with global shapes and types (?). Argument mapping: (?).")
        elif event == "/jax/core/compile/backend_compile_duration":
            lines.append(f"Finished XLA compilation of {name} in 0 sec")
    return "\n".join(lines) + "\n"


# %%
import re

_LOWERED = re.compile(r"Compiling jit\((.+?)\) with global shapes and types (\(.*\))\. Argument mapping")
_COMPILED = re.compile(r"Finished XLA compilation of jit\((.+)\) in \S+ sec")


def compiled_programs(log_text):
    waiting = {}  # each function's lowered programs XLA has not compiled yet, the latest last
    programs = {}
    for line in log_text.splitlines():
        lowered = _LOWERED.search(line)
        if lowered:
            waiting.setdefault(lowered.group(1), []).append(lowered.group(2))
            continue
        compiled = _COMPILED.search(line)
        if compiled and waiting.get(compiled.group(1)):
            programs.setdefault(compiled.group(1), []).append(waiting[compiled.group(1)].pop())
    return programs
