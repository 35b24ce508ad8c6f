"""A small causal language model trained as a PyTorch user writes it: token embedding plus
learned positions, nn.TransformerEncoder with a causal mask and dropout 0.1, a head tied to
the embedding, AdamW, cross-entropy, batches from a DataLoader with two worker processes.

Usage: transformer_lm.py [--steps 20]   (REALISTIC_TRUTH=FILE: see truth.py)
"""
import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

from truth import Truth

truth = Truth()


class Windows(Dataset):
    """Windows of a synthetic token stream: the input and the same window shifted by one."""

    def __init__(self, samples, length, vocab):
        generator = torch.Generator().manual_seed(1)
        self.stream = torch.randint(0, vocab, (samples * length + 1,), generator=generator)
        self.samples, self.length = samples, length

    def __len__(self):
        return self.samples

    def __getitem__(self, i):
        chunk = self.stream[i * self.length:(i + 1) * self.length + 1]
        return chunk[:-1], chunk[1:]


class LM(nn.Module):
    def __init__(self, vocab, width, heads, layers, context):
        super().__init__()
        self.tok = nn.Embedding(vocab, width)
        nn.init.normal_(self.tok.weight, std=0.02)
        self.pos = nn.Parameter(torch.zeros(1, context, width))
        self.drop = nn.Dropout(0.1)
        layer = nn.TransformerEncoderLayer(width, heads, dim_feedforward=4 * width, dropout=0.1, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, layers)
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab, bias=False)
        self.head.weight = self.tok.weight  # tied: one parameter, two modules
        self.register_buffer("causal", torch.triu(torch.full((context, context), float("-inf")), diagonal=1))

    def forward(self, tokens):
        t = tokens.shape[1]
        x = self.drop(self.tok(tokens) + self.pos[:, :t])
        x = self.enc(x, mask=self.causal[:t, :t])
        return self.head(self.norm(x))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()
    torch.manual_seed(0)
    vocab, context, batch = 256, 32, 8
    data = Windows(args.steps * batch, context, vocab)
    loader = DataLoader(data, batch_size=batch, shuffle=True, num_workers=2, generator=torch.Generator().manual_seed(2))
    model = LM(vocab, width=64, heads=4, layers=2, context=context)
    criterion = nn.CrossEntropyLoss()
    truth.watch(model, criterion, batch=batch)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)
    model.train()
    for x, y in loader:
        optimizer.zero_grad(set_to_none=True)
        loss = criterion(model(x).view(-1, vocab), y.view(-1))
        with truth.backward():
            loss.backward()
        optimizer.step()
        truth.step()
    print(f"transformer_lm: {args.steps} steps, last loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
