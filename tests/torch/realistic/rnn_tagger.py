"""A sequence tagger trained as a PyTorch user writes it: a 2-layer GRU, a bidirectional LSTM
over its outputs, a block run under activation checkpointing (torch.utils.checkpoint,
reentrant as PyTorch 1.13 does by default), an attention over the sentence written with
torch.bmm and torch.matmul, a TorchScript-compiled MLP head (torch.jit.script), Adam.

Usage: rnn_tagger.py [--steps 10]   (REALISTIC_TRUTH=FILE: see truth.py)
"""
import argparse
import math

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

from truth import Truth

truth = Truth()


class Head(nn.Module):
    def __init__(self, width, hidden, tags):
        super().__init__()
        self.fc1 = nn.Linear(width, hidden)
        self.fc2 = nn.Linear(hidden, tags)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class Tagger(nn.Module):
    def __init__(self, vocab, width, tags):
        super().__init__()
        self.emb = nn.Embedding(vocab, width)
        self.gru = nn.GRU(width, width, num_layers=2, batch_first=True)
        self.lstm = nn.LSTM(width, width // 2, batch_first=True, bidirectional=True)
        self.mix = nn.Sequential(nn.Linear(width, width), nn.Tanh(), nn.Linear(width, width))
        self.query = nn.Linear(width, width)
        self.head = torch.jit.script(Head(2 * width, 64, tags))

    def forward(self, tokens):
        h, _ = self.gru(self.emb(tokens))
        h, _ = self.lstm(h)
        h = h + checkpoint(self.mix, h)
        q = self.query(h)
        keys = h.transpose(1, 2)
        scores = torch.bmm(q, keys)
        truth.bmm(q, keys)
        weights = torch.softmax(scores / math.sqrt(h.shape[-1]), dim=-1)
        context = torch.matmul(weights, h)
        truth.matmul(weights, context)
        return self.head(torch.cat([h, context], dim=-1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()
    torch.manual_seed(0)
    vocab, tags, batch, length = 500, 12, 8, 24
    model = Tagger(vocab, width=32, tags=tags)
    criterion = nn.CrossEntropyLoss()
    truth.watch(model, criterion, batch=batch)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    tokens = torch.randint(0, vocab, (args.steps, batch, length))
    labels = torch.randint(0, tags, (args.steps, batch, length))
    model.train()
    for step in range(args.steps):
        optimizer.zero_grad(set_to_none=True)
        loss = criterion(model(tokens[step]).reshape(-1, tags), labels[step].reshape(-1))
        with truth.backward():
            loss.backward()
        optimizer.step()
        truth.step()
    print(f"rnn_tagger: {args.steps} steps, last loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
