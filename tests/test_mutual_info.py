"""Mutual information, tokenisers and the dependency kernel (data/mutual_info.py, dependency.py)."""

import numpy as np
import pytest

from mope_jax.analysis import stats
from mope_jax.data import dependency, mutual_info as mi
from mope_jax.data.synthetic import block_copy_stream


def test_independent_sequences_have_zero_mi():
    rng = np.random.default_rng(0)
    n, v = 20_000, 8
    x, y = rng.integers(0, v, n), rng.integers(0, v, n)
    # Under independence 2N I_plugin ~ chi^2 with (V-1)^2 = 49 dof: mean 49/(2N) = 1.2e-3 and sd
    # sqrt(98)/(2N) = 2.5e-4. Miller-Madow removes the mean (all bins are occupied), so
    # |I_MM| < 1.5e-3 is a 6 sd bound, and the plug-in is visibly biased upward.
    assert abs(mi.mutual_information(x, y)) < 1.5e-3
    assert mi.mutual_information(x, y, correction="none") > 7e-4
    assert np.all(np.abs(mi.mi_profile(rng.integers(0, v, n), [1, 2, 7])) < 1.5e-3)


def binary_entropy(e):
    return -(e * np.log(e) + (1 - e) * np.log(1 - e))


def test_markov_mi_closed_form_for_symmetric_binary_chain():
    e = 0.1
    P = np.array([[1 - e, e], [e, 1 - e]])
    for r in (1, 2, 5):
        er = (1 - (1 - 2 * e) ** r) / 2  # flip probability after r steps
        np.testing.assert_allclose(mi.markov_mi(P, r), np.log(2) - binary_entropy(er), rtol=1e-10)


def test_estimator_recovers_known_markov_chain():
    P = np.array([[0.8, 0.15, 0.05], [0.1, 0.6, 0.3], [0.3, 0.1, 0.6]])
    x = mi.sample_markov(P, 100_000, seed=1)
    got = mi.mi_profile(x, [1, 2, 4])
    want = np.array([mi.markov_mi(P, r) for r in (1, 2, 4)])  # 0.19, 0.09, 0.03 nats
    # sd of the estimate ~ sd(log-ratio) / sqrt(N_eff) ~ 0.6 / sqrt(1e5 / 5) = 4e-3 for a chain
    # whose correlation time is ~ 5 steps; 0.012 is 3 sd.
    np.testing.assert_allclose(got, want, atol=0.012)
    assert got[0] > got[1] > got[2]


def test_word_and_merge_tokenisers():
    w = mi.word_tokenize("Hello, world! Hello again.")
    assert [w.vocab[i] for i in w.ids] == ["hello", ",", "world", "!", "hello", "again", "."]
    text = "the cat sat on the mat; the cat ate the rat.\n" * 20
    vocab, merges = mi.train_merges(text, 6)
    tok = mi.apply_merges(text, vocab, merges)
    assert mi.decode_ids(tok) == text and len(merges) == 6 and "the" in vocab
    assert tok.chars_per_token > 1.5
    # with more merges than within-word pairs it stops once every word is one token
    vocab, merges = mi.train_merges(text, 50)
    words = mi.apply_merges(text, vocab, merges)
    assert len(merges) < 50 and words.chars_per_token == len(text) / (len(text.split()) * 2)
    assert all(len(t) == 1 or not any(c.isspace() for c in t) for t in vocab)
    # overlapping pairs merge left to right: a a a -> (aa) a
    np.testing.assert_array_equal(
        mi._merge_pair(np.array([1, 1, 1, 2, 1, 1]), 1, 1, 9), [9, 1, 2, 9]
    )


def test_cap_vocab_keeps_frequent_ids():
    ids = np.array([5, 5, 5, 2, 2, 7, 9, 3])
    got = mi.cap_vocab(ids, 3)
    np.testing.assert_array_equal(got, [0, 0, 0, 1, 1, 2, 2, 2])


@pytest.mark.parametrize("block_len", [5, 8, 16, 24])
def test_block_task_kernel_has_the_width_it_was_built_with(block_len):
    stream = block_copy_stream(60_000, block_len=block_len, num_symbols=16, seed=0)
    k = dependency.dependency_kernel(stream, 2 * block_len, kind="match")
    assert dependency.kernel_width(k) == dependency.block_copy_width(block_len) == block_len - 2
    # the MI kernel is dominated by the markers' period: its first strong peak is at r = B
    # (B >= 8; for short blocks the copy outweighs it) -- W ~ B either way
    if block_len >= 8:
        assert (
            dependency.kernel_width(dependency.dependency_kernel(stream, 2 * block_len, kind="mi"))
            == block_len
        )


def test_collapse_spread():
    # a power law is linear in log-log, so the interpolation is exact and the spread is 0
    r = np.arange(1, 40, dtype=float)
    same = {"a": (r, r**-0.7), "b": (2 * r, (2 * r) ** -0.7)}
    assert mi.collapse_spread(same) < 1e-9
    other = {"a": (r, r**-0.7), "b": (r, r**-1.5)}
    assert mi.collapse_spread(other) > 0.5


@pytest.mark.parametrize("width", [2, 5, 16])
def test_repeat_block_variant_kernel_width(width):
    s = dependency.block_repeat_stream(40_000, width=width, num_symbols=16, seed=1)
    assert s[0] == 0 and np.array_equal(s[1 : width + 1], s[width + 1 : 2 * width + 1])
    k = dependency.dependency_kernel(s, 3 * width, kind="match")
    assert dependency.kernel_width(k) == width
    text = dependency.stream_to_text(s[:50])
    assert text[0] == "." and len(text) == 50


# --------------------------------------------------------------------------- block bootstrap


def test_mi_from_counts_equals_the_pairwise_estimator():
    rng = np.random.default_rng(0)
    x = rng.integers(0, 7, 5000)
    y = (x + rng.integers(0, 3, 5000)) % 9  # dependent, with empty joint bins
    joint = np.zeros((7, 9))
    np.add.at(joint, (x, y), 1)
    for corr in ("miller_madow", "none"):
        want = mi.mutual_information(x, y, correction=corr)
        np.testing.assert_allclose(mi.mi_from_counts(joint, correction=corr), want, rtol=1e-12)
    # vectorised over leading axes, and an empty histogram is 0
    got = mi.mi_from_counts(np.stack([joint, 2 * joint, np.zeros_like(joint)]))
    np.testing.assert_allclose(got[0], mi.mutual_information(x, y), rtol=1e-12)
    # doubled counts are the pairs tallied twice (N doubles: a smaller Miller-Madow term)
    np.testing.assert_allclose(got[1], mi.mutual_information(np.r_[x, x], np.r_[y, y]), rtol=1e-12)
    assert got[2] == 0.0


def test_token_offsets_and_char_blocks():
    text = "The cat sat; the Cat ate.\nA rat!" * 30
    vocab, merges = mi.train_merges(text, 8)
    for tok in (
        mi.char_tokenize(text),
        mi.apply_merges(text, vocab, merges),
        mi.word_tokenize(text),
    ):
        for i, start in zip(tok.ids[:40], tok.starts[:40]):
            piece = tok.vocab[i]
            assert text[start : start + len(piece)].lower() == piece.lower()
        b = mi.char_blocks(tok, 100)
        np.testing.assert_array_equal(b, tok.starts // 100)
    with pytest.raises(ValueError, match="no character offsets"):
        mi.char_blocks(mi.Tokenized("x", np.zeros(3, np.int64), ("a",), 1.0), 10)


def test_block_pair_counts_tally_the_pairs_inside_blocks():
    rng = np.random.default_rng(1)
    x = rng.integers(0, 5, 1000)
    one = mi.block_pair_counts(x, np.zeros(1000, np.int64), 3, num_ids=5, num_blocks=1)[0]
    full = np.zeros((5, 5), np.int64)
    np.add.at(full, (x[:-3], x[3:]), 1)
    np.testing.assert_array_equal(one, full)
    blocks = np.arange(1000) // 100  # 10 blocks: 9 joins x 3 straddling pairs are left out
    per = mi.block_pair_counts(x, blocks, 3, num_ids=5, num_blocks=10)
    assert per.sum() == 997 - 27 and per[4].sum() == 97
    np.testing.assert_array_equal(
        per[4],
        mi.block_pair_counts(x[400:500], np.zeros(100, np.int64), 3, num_ids=5, num_blocks=1)[0],
    )


def test_block_bootstrap_subtracts_the_duplication_floor_on_iid_tokens():
    # A resample that draws a block twice tallies its pairs twice: the Miller-Madow MI of
    # independent tokens (V = 64, 40k pairs) then sits near +0.05 nats, not 0. The resample's own
    # shuffled floor removes it; the sample's floor (~0) would not.
    x = np.random.default_rng(3).integers(0, 64, 40_000)
    w = stats.bootstrap_weights(40, 100, seed=0)
    raw, floor = mi.bootstrap_mi_profile(x, np.arange(len(x)) // 1000, [1, 5], w)
    assert np.median(raw) > 0.03 and np.median(floor) > 0.03
    lo, hi = stats.percentile_interval(raw - floor[:, None])
    assert np.all(lo < 0) and np.all(hi > 0) and np.all(hi - lo < 0.02)
    again = mi.bootstrap_mi_profile(x, np.arange(len(x)) // 1000, [1, 5], w)
    np.testing.assert_array_equal(again[0], raw)  # deterministic given weights and seed
    np.testing.assert_array_equal(again[1], floor)


def test_block_bootstrap_intervals_match_independent_markov_chains():
    # ten independent chains: the bootstrap sd of one chain's estimate should match the spread of
    # the estimates across chains, and the 95% intervals should cover the exact MI
    P = np.array([[0.8, 0.15, 0.05], [0.1, 0.6, 0.3], [0.3, 0.1, 0.6]])
    r = [1, 2, 4]
    want = np.array([mi.markov_mi(P, d) for d in r])
    est, sd, covered = [], [], []
    for s in range(10):
        x = mi.sample_markov(P, 50_000, seed=s)
        raw, floor = mi.bootstrap_mi_profile(
            x, np.arange(len(x)) // 1000, r, stats.bootstrap_weights(50, 200, seed=s)
        )
        reps = raw - floor[:, None]
        lo, hi = stats.percentile_interval(reps)
        covered.append((lo <= want) & (want <= hi))
        est.append(mi.mi_profile(x, r))
        sd.append(reps.std(0))
    # sd across 10 chains is itself uncertain by ~ 1/sqrt(18) = 24%: a factor 1.6 is ~2 sd
    ratio = np.mean(sd, 0) / np.std(est, 0, ddof=1)
    assert np.all((ratio > 1 / 1.6) & (ratio < 1.6)), ratio
    assert np.mean(covered) >= 0.8, np.mean(covered, 0)
