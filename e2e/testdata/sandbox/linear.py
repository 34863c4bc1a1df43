"""A linear model program that only declares (TestProgramsRefusedUnisolated
submits it; it never trains)."""

import numpy as np

import gtrainprog


class Linear:
    def declare(self, seed, inputs, outputs, hidden):
        return [("w", (inputs, outputs), np.zeros((inputs, outputs), np.float32)),
                ("b", (outputs,), np.zeros(outputs, np.float32))]


gtrainprog.serve(Linear())
