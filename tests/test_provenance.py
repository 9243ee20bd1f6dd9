"""What every record says about the machine: the CPU model and the features that change
speed or, for bf16, the numbers."""

from __future__ import annotations

from mope_jax import provenance


def test_cpu_info_reads_model_and_flags(monkeypatch, tmp_path):
    fake = tmp_path / "cpuinfo"
    fake.write_text(
        "processor\t: 0\nmodel name\t: Test CPU 9000\nflags\t\t: fpu sse avx2 avx512f amx_tile\n"
        "processor\t: 1\nmodel name\t: Test CPU 9000\nflags\t\t: fpu sse avx2 avx512f amx_tile\n"
    )
    real = provenance.Path
    monkeypatch.setattr(provenance, "Path", lambda p: fake if p == "/proc/cpuinfo" else real(p))
    info = provenance.cpu_info()
    assert info == {"cpu_model": "Test CPU 9000", "cpu_flags": ["avx2", "avx512f", "amx_tile"]}
    env = {"processor": "x86_64", **info}
    assert provenance.cpu_text(env) == "x86_64, Test CPU 9000 (avx2, avx512f, amx_tile)"


def test_cpu_text_of_an_older_record_is_unchanged():
    assert provenance.cpu_text({"processor": "x86_64"}) == "x86_64"


def test_environment_records_the_cpu():
    env = provenance.environment()
    assert "cpu_model" in env and "cpu_flags" in env


def test_records_name_the_commit_the_process_loaded(monkeypatch):
    # A campaign runs for hours; a commit made beside it must not be credited with its runs.
    now = provenance.git_commit()
    monkeypatch.setattr(provenance, "_COMMIT_AT_LOAD", "0" * 40)
    env = provenance.environment()
    assert env["git_commit"] == "0" * 40
    assert env["git_commit_at_write"] == now
    assert f"(HEAD {now} when written)" in provenance.describe(env)
    monkeypatch.setattr(provenance, "_COMMIT_AT_LOAD", now)
    env = provenance.environment()
    assert env["git_commit"] == now and "git_commit_at_write" not in env


def test_at_write_reads_head_again(monkeypatch):
    # A run's env is taken when it starts; its campaign record is written up to hours later:
    # fourierqk mid fixed-bin-4 seed 0 (2026-12-03) names cd1b8c2+dirty "at write", the HEAD
    # of its start, although 51a65e8 had landed by then.
    loaded = "1" * 40
    started = {"git_commit": loaded, "git_commit_at_write": loaded + "+dirty", "cpu": "x"}
    monkeypatch.setattr(provenance, "git_commit", lambda: "2" * 40)
    assert provenance.at_write(started) == {
        "git_commit": loaded,
        "git_commit_at_write": "2" * 40,
        "cpu": "x",
    }
    monkeypatch.setattr(provenance, "git_commit", lambda: loaded)
    assert provenance.at_write(started) == {"git_commit": loaded, "cpu": "x"}


def test_the_commit_named_by_the_sender_wins(monkeypatch):
    """A copy of the working tree on a borrowed accelerator carried the session's first .git
    under a newer tree (git read de6d775+dirty for code of 49a2359): MOPE_JAX_GIT_COMMIT, set
    by the command that sent the copy, is what the records name."""
    monkeypatch.setenv("MOPE_JAX_GIT_COMMIT", "4" * 40)
    assert provenance.git_commit() == "4" * 40
    monkeypatch.delenv("MOPE_JAX_GIT_COMMIT")
    assert provenance.git_commit() != "4" * 40
