"""A serving loop as a PyTorch user writes it: a Linear-GELU-LayerNorm-Linear block in eval
mode under torch.no_grad(), one request per sequence length, every length a new input shape.

Usage: variable_lengths.py [--lengths 300]   (REALISTIC_TRUTH=FILE: see truth.py)
Lengths 1..N in a seeded random order.
"""
import argparse

import torch
from torch import nn

from truth import Truth

truth = Truth()


class FeedForward(nn.Module):
    def __init__(self, width, hidden):
        super().__init__()
        self.fc1 = nn.Linear(width, hidden)
        self.act = nn.GELU()
        self.norm = nn.LayerNorm(hidden)
        self.fc2 = nn.Linear(hidden, width)

    def forward(self, x):
        return self.fc2(self.norm(self.act(self.fc1(x))))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lengths", type=int, default=300)
    args = parser.parse_args()
    torch.manual_seed(0)
    width = 16
    model = FeedForward(width, 4 * width).eval()
    truth.watch(model, batch=1)
    order = torch.randperm(args.lengths, generator=torch.Generator().manual_seed(1)) + 1
    checksum = 0.0
    with torch.no_grad():
        for length in order.tolist():
            checksum += model(torch.randn(1, length, width)).sum().item()
    print(f"variable_lengths: {args.lengths} lengths, checksum {checksum:.4f}")


if __name__ == "__main__":
    main()
