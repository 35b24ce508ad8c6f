"""A training loop stopped by hand: after a few steps the script sends itself SIGINT (what
Ctrl-C in a terminal does), and the KeyboardInterrupt is left uncaught, so that Python ends
the program as it does for Ctrl-C (killed by SIGINT: status -2 to a parent, 130 in a shell).

Usage: ctrl_c.py [--stop-after 3]   (REALISTIC_TRUTH=FILE: see truth.py)
Exits 1 if the loop ran to its end: the interrupt did not arrive.
"""
import argparse
import os
import signal
import sys

import torch
from torch import nn

from truth import Truth

truth = Truth()


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU())
        self.out = nn.Linear(64, 1)

    def forward(self, x):
        return self.out(self.body(x))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--stop-after", type=int, default=3)
    args = parser.parse_args()
    torch.manual_seed(0)
    batch = 32
    model = Regressor()
    criterion = nn.MSELoss()
    truth.watch(model, criterion, batch=batch)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(batch, 20), torch.randn(batch, 1)
    for step in range(args.stop_after + 50):
        optimizer.zero_grad(set_to_none=True)
        loss = criterion(model(x), y)
        with truth.backward():
            loss.backward()
        optimizer.step()
        truth.step()
        print(f"ctrl_c: step {step + 1}, loss {loss.item():.4f}", flush=True)
        if step + 1 == args.stop_after:
            os.kill(os.getpid(), signal.SIGINT)  # KeyboardInterrupt is raised here
    print("ctrl_c: the interrupt did not arrive", file=sys.stderr)
    sys.exit(1)


if __name__ == "__main__":
    main()
