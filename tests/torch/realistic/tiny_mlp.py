"""A tiny MLP trained for many steps as a PyTorch user writes it: every op is a few
microseconds, so what observing costs per op and per module call shows.

Usage: tiny_mlp.py [--steps 3000]   (REALISTIC_TRUTH=FILE: see truth.py)
"""
import argparse

import torch
from torch import nn

from truth import Truth

truth = Truth()


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=3000)
    args = parser.parse_args()
    torch.manual_seed(0)
    batch = 16
    model = MLP()
    criterion = nn.CrossEntropyLoss()
    truth.watch(model, criterion, batch=batch)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    x, y = torch.randn(batch, 16), torch.randint(0, 4, (batch,))
    for _ in range(args.steps):
        optimizer.zero_grad(set_to_none=True)
        loss = criterion(model(x), y)
        with truth.backward():
            loss.backward()
        optimizer.step()
        truth.step()
    print(f"tiny_mlp: {args.steps} steps, last loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
