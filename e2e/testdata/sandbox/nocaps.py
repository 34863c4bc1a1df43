"""TestAgentUnprivileged's program: it refuses to serve when it holds any
capability or runs as the agent's uid (the sandbox must have dropped both),
then runs the reference MLP program (mlp.py, beside it)."""

import os
import runpy
import sys

with open("/proc/self/status") as f:
    for line in f:
        name, _, value = line.partition(":")
        if name in ("CapInh", "CapPrm", "CapEff", "CapAmb") and int(value, 16) != 0:
            sys.exit("nocaps.py: the program holds capabilities: %s %s" % (name, value.strip()))
if os.getuid() == int(os.environ["AGENT_UID"]) or os.getuid() == 0:
    sys.exit("nocaps.py: the program runs as uid %d, the agent's or root" % os.getuid())
sys.argv = ["mlp.py"]
runpy.run_path("mlp.py", run_name="__main__")
