"""What a call of ``experiments.device_campaigns`` runs: the prepared queues (rows in priority
order, one job a row), and explicit ``EXPERIMENT:SCALE[:ROWS[:SEEDS]]`` job specs parsed into
:class:`Job` (one UsageError, with the fix, for a spec that is not one)."""

from __future__ import annotations

from dataclasses import dataclass

QUEUES = {
    "paper_a": (
        "paper_a",
        "reference",
        (
            "a-baseline",
            "a-ega-morlet-causal",
            "a-ega-morlet",
            "a-mope",
            "a-ega1-causal",
            "a-ega1",
        ),
        3,
    ),
    "paper_c": (
        "fourierqk",
        "reference-tf32",
        ("learned", "causal-morlet", "causal-gauss", "fourier-qk", "multifourier-qk", "random-qk"),
        3,
    ),
}


@dataclass(frozen=True)
class Job:
    """One ``mope-jax campaign run``: an experiment at a scale, optionally some rows and seeds."""

    experiment: str
    scale: str
    rows: tuple[str, ...] = ()
    seeds: int | None = None

    def __str__(self) -> str:
        parts = [self.experiment, self.scale]
        if self.rows or self.seeds is not None:
            parts.append(",".join(self.rows))
        if self.seeds is not None:
            parts.append(str(self.seeds))
        return ":".join(parts)

    def options(self) -> list[str]:
        """The ``campaign run`` options beyond the experiment and scale."""
        opts = ["--rows", ",".join(self.rows)] if self.rows else []
        return opts + (["--seeds", str(self.seeds)] if self.seeds is not None else [])


JOB_FORMAT = (
    "(e.g. paper_a:mid or paper_a:reference:a-baseline,a-mope:1); `mope-jax campaign status "
    "EXPERIMENT --scale S` lists what a campaign plans"
)


def parse_jobs(items: list[str]) -> list[Job]:
    """``EXPERIMENT:SCALE[:ROWS[:SEEDS]]`` -> Job; one UsageError (the fix) for anything else."""
    from mope_jax.errors import UsageError

    jobs = []
    for item in items:
        parts = item.split(":")
        rows = tuple(r for r in parts[2].split(",") if r) if len(parts) > 2 else ()
        seeds = parts[3] if len(parts) > 3 else None
        if not 2 <= len(parts) <= 4 or not all(parts[:2]) or (len(parts) > 2 and not rows):
            raise UsageError(
                f"{item!r} is not EXPERIMENT:SCALE[:ROWS[:SEEDS]] with SEEDS >= 1 {JOB_FORMAT}"
            )
        if seeds is not None and not (seeds.isascii() and seeds.isdigit() and int(seeds) >= 1):
            raise UsageError(
                f"{item!r} is not EXPERIMENT:SCALE[:ROWS[:SEEDS]] with SEEDS >= 1: seeds must "
                f"be a whole number >= 1, not {seeds!r} (e.g. {':'.join(parts[:3])}:3)"
            )
        jobs.append(Job(parts[0], parts[1], rows, None if seeds is None else int(seeds)))
    return jobs


def queue_jobs(name: str, scale: str | None = None) -> list[Job]:
    """The queue's rows in priority order, one job a row (so the clock guard and the archive act
    at every row boundary)."""
    from mope_jax.errors import UsageError

    if name not in QUEUES:
        raise UsageError(f"--queue {name!r}: no such queue; use one of {', '.join(QUEUES)}")
    experiment, default_scale, rows, seeds = QUEUES[name]
    return [Job(experiment, scale or default_scale, (r,), seeds) for r in rows]
