"""A tiny regression trained with plain PyTorch on the CPU: fit y = 3x - 1 from noisy samples."""

import argparse

import torch

from evotree.harness import get_recorder, seed_everything


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=None)  # None: the run's seed
    args = parser.parse_args()

    seed_everything(args.seed)
    rec = get_recorder()
    rec.signal(0, total_steps=args.steps)
    x = torch.randn(256, 1)
    y = 3 * x - 1 + 0.1 * torch.randn(256, 1)
    model = torch.nn.Linear(1, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    for step in range(1, args.steps + 1):
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        rec.signal(step, loss=loss.item())
        if rec.budget_exceeded(step):
            break
        if step % 20 == 0:
            print(f"step {step} loss {loss.item():.4f}")
    torch.save(model.state_dict(), "model.pt")


if __name__ == "__main__":
    main()
