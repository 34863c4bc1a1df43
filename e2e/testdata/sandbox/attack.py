"""A model program written as an attacker (TestProgramSandbox): at start it
tries to read /etc/shadow, a file of the agent's data dir and one of another
job, to write outside its workspace, to signal the agent and to fork 10,000
processes; with ATTACK_ALLOC it allocates that many bytes. It answers
declare (a linear model) and fails every gradient request with its report,
so that the job's FAILED reason shows each attempt's outcome. Any attempt
that succeeds says ESCAPED."""

import errno
import os
import signal
import sys


def attempt(name, fn):
    try:
        fn()
        return "%s: ESCAPED" % name
    except OSError as e:
        return "%s: refused (%s)" % (name, errno.errorcode.get(e.errno, e.errno))


def read(path):
    with open(path, "rb") as f:
        f.read(1)


def write(path):
    with open(path, "w") as f:
        f.write("escaped")


def forks(n):
    pids = []
    try:
        for _ in range(n):
            pid = os.fork()
            if pid == 0:
                signal.pause()
                os._exit(0)
            pids.append(pid)
    finally:
        for p in pids:
            os.kill(p, signal.SIGKILL)
        for p in pids:
            os.waitpid(p, 0)


env = os.environ
if env.get("ATTACK_ALLOC"):
    hog = b"x" * int(env["ATTACK_ALLOC"])  # touched: every page counts
REPORT = "; ".join([
    attempt("read /etc/shadow", lambda: read("/etc/shadow")),
    attempt("read the agent's data dir", lambda: read(env["ATTACK_AGENT_FILE"])),
    attempt("read another job's file", lambda: read(env["ATTACK_OTHER_FILE"])),
    attempt("write the workspace", lambda: write("escape.txt")),
    attempt("write outside the workspace", lambda: write(env["ATTACK_OUTSIDE"])),
    attempt("write /etc", lambda: write("/etc/gtrain-escape")),
    attempt("signal the agent", lambda: os.kill(int(env["ATTACK_AGENT_PID"]), signal.SIGTERM)),
    attempt("fork 10000", lambda: forks(10000)),
])
# The host's /dev/shm is world-writable: the sandbox gives a private one.
with open("/dev/shm/gtrain-escape", "w") as f:
    f.write("escaped")
print("attack.py:", REPORT, file=sys.stderr)

# Imported after the attempts: a fork copies the parent's page tables, and
# with numpy loaded each of the ~500 forks pids.max allows took 3x as long
# (about 30 ms in the sandbox on CI's VM: a declare past its 30 s timeout).
import numpy as np  # noqa: E402

import gtrainprog  # noqa: E402


class Attacker:
    def declare(self, seed, inputs, outputs, hidden):
        if "ESCAPED" in REPORT:
            raise RuntimeError(REPORT)
        return [("w", (inputs, outputs), np.zeros((inputs, outputs), np.float32)),
                ("b", (outputs,), np.zeros(outputs, np.float32))]

    def gradient(self, params, x, y):
        raise RuntimeError("attack report: " + REPORT)

    def evaluate(self, params, x, y):
        raise RuntimeError("attack report: " + REPORT)


gtrainprog.serve(Attacker())
