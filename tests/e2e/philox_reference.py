"""Kiln's random numbers computed on the host with numpy: Philox4x32-10
(Random123) and the numbers Kiln's targets make from its words
(compiler/lib/Conversion/AtenToLinalg/RandomBodies.h). The tests compare the
targets' draws with these bit for bit."""

from __future__ import annotations

import math

import numpy as np

MASK = np.uint64(0xFFFFFFFF)
MULTIPLIERS = (np.uint64(0xD2511F53), np.uint64(0xCD9E8D57))
WEYL = (np.uint64(0x9E3779B9), np.uint64(0xBB67AE85))

# Random123's known answers for Philox4x32-10: (counter, key, output).
KNOWN_ANSWERS = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


def philox(counter, key):
    """Philox4x32-10 of counter words (4) under key words (2), each a
    uint64 array (or number) holding 32 bits."""
    c = [np.asarray(w, dtype=np.uint64) for w in counter]
    k = [np.asarray(w, dtype=np.uint64) for w in key]
    shift = np.uint64(32)
    for r in range(10):
        if r:
            k = [(k[0] + WEYL[0]) & MASK, (k[1] + WEYL[1]) & MASK]
        p0 = MULTIPLIERS[0] * c[0]
        p1 = MULTIPLIERS[1] * c[2]
        c = [(p1 >> shift) ^ c[1] ^ k[0], p1 & MASK, (p0 >> shift) ^ c[3] ^ k[1], p0 & MASK]
    return c


def words(count: int, seed: int, stream: int, draw: int = 0):
    """The four words of elements 0..count-1 of a draw."""
    index = np.arange(count, dtype=np.uint64)
    seed = np.uint64(seed)
    with np.errstate(over="ignore"):
        return philox((index & MASK, index >> np.uint64(32), np.full(count, stream, np.uint64),
                       np.full(count, draw, np.uint64)),
                      (seed & MASK, seed >> np.uint64(32)))


def top_bits(hi, lo, bits: int):
    if bits <= 32:
        return hi >> np.uint64(32 - bits)
    return ((hi << np.uint64(32)) | lo) >> np.uint64(64 - bits)


def uniform(count: int, seed: int, stream: int, bits: int, draw: int = 0) -> np.ndarray:
    """random_uniform: k 2^-bits in float64 (exact for bits <= 53)."""
    w = words(count, seed, stream, draw)
    return top_bits(w[0], w[1], bits).astype(np.float64) * 2.0 ** -bits


def normal(count: int, seed: int, stream: int, wide: bool, draw: int = 0) -> np.ndarray:
    """random_normal by Box-Muller, in float64 (the target computes in f32
    unless `wide`)."""
    w = words(count, seed, stream, draw)
    bits = 53 if wide else 24
    k1 = top_bits(w[0], w[1], bits)
    k2 = top_bits(w[2], w[3], bits) if wide else top_bits(w[1], w[0], bits)
    u1 = (k1 + np.uint64(1)).astype(np.float64) * 2.0 ** -bits
    u2 = k2.astype(np.float64) * 2.0 ** -bits
    return np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)


def bits63(count: int, seed: int, stream: int, draw: int = 0) -> np.ndarray:
    """random_bits: (word0 << 32 | word1) >> 1, as int64."""
    w = words(count, seed, stream, draw)
    return (((w[0] << np.uint64(32)) | w[1]) >> np.uint64(1)).astype(np.int64)


def poisson(rates: np.ndarray, seed: int, stream: int) -> np.ndarray:
    """random_poisson of float64 `rates` (flat): draw d of element i is the
    counter (i, stream, d), two 53-bit uniforms; below rate 10 the product of
    uniforms until it falls to e^-rate, from 10 Hormann's PTRS, as
    RandomBodies.cpp does it (and eager's sample_poisson)."""
    rates = np.asarray(rates, dtype=np.float64)
    n = len(rates)
    k = np.zeros(n)
    product = np.ones(n)
    done = ~((rates > 0) & np.isfinite(rates))
    small = rates < 10
    with np.errstate(all="ignore"):
        bound = np.exp(-rates)
        b = 0.931 + 2.53 * np.sqrt(rates)
        a = -0.059 + 0.02483 * b
        log_inverse_alpha = np.log(1.1239 + 1.1328 / (b - 3.4))
        vr = 0.9277 - 3.6224 / (b - 2)
        draw = 0
        while not done.all():
            w = words(n, seed, stream, draw)
            u = top_bits(w[0], w[1], 53).astype(np.float64) * 2.0 ** -53
            v = top_bits(w[2], w[3], 53).astype(np.float64) * 2.0 ** -53
            product = np.where(done, product, product * u)
            more = product > bound
            centred = u - 0.5
            us = 0.5 - np.abs(centred)
            kk = np.floor((2 * a / us + b) * centred + rates + 0.43)
            quick = (us >= 0.07) & (v <= vr)
            rejected = (kk < 0) | ((us < 0.013) & (v > us))
            lgam = np.array([math.lgamma(x + 1) if np.isfinite(x) and x >= 0 else np.nan
                             for x in kk])
            lhs = np.log(v) + log_inverse_alpha - np.log(a / (us * us) + b)
            accepted = quick | (~rejected & (lhs <= kk * np.log(rates) - rates - lgam))
            step_k = np.where(small, np.where(more, k + 1, k), kk)
            step_done = np.where(small, ~more, accepted)
            k = np.where(done, k, step_k)
            done = done | step_done
            draw += 1
    k = np.where(rates == 0, 0.0, k)
    k = np.where(np.isposinf(rates), np.inf, k)
    return np.where((rates >= 0), k, np.nan)
