"""did_you_mean over a long list of names (every server and switch of a 131k-GPU design: 21k), with
the same answer, without comparing the word with every name.

difflib's ratio of two strings is 2 x (characters matched) / (both lengths), and the characters
matched are at most those the two share as multisets (its quick_ratio). That bound is found for all
names at once from a table of each name's character counts; the names are then compared from the
highest bound down, and the look-up stops once no bound left reaches the best ratio found. A look-up
that scanned every name took 30-170 ms at 131k GPUs; this takes a few.
"""
from __future__ import annotations

from difflib import SequenceMatcher

import numpy as np

from ..problems import did_you_mean

CUTOFF = 0.5  # did_you_mean's (problems.close_matches)


class CloseNames:
    def __init__(self, names: list[str]):
        self.names = list(names)
        text = "".join(self.names)
        self._plain = text.isascii()  # a character per byte: the counts below are per character
        if not self._plain:
            return
        self._lengths = np.fromiter(map(len, self.names), np.int64, len(self.names))
        codes = np.frombuffer(text.encode("ascii"), np.uint8)
        self._alphabet, symbols = np.unique(codes, return_inverse=True)
        rows = np.repeat(np.arange(len(self.names)), self._lengths)
        width = len(self._alphabet)
        self._counts = np.bincount(rows * width + symbols.ravel(), minlength=len(self.names) * width
                                   ).reshape(len(self.names), width)

    def guess(self, word: str) -> str | None:
        """did_you_mean(word, names): the closest name with a ratio of at least CUTOFF (of equal
        ratios, the greatest name), or None."""
        if not self._plain or not word.isascii() or not self.names:
            return did_you_mean(word, self.names)
        mine = np.zeros(len(self._alphabet), np.int64)
        codes = np.frombuffer(word.encode("ascii"), np.uint8)
        at = np.searchsorted(self._alphabet, codes)
        known = (at < len(self._alphabet)) & (self._alphabet[np.minimum(at, len(self._alphabet) - 1)] == codes)
        np.add.at(mine, at[known], 1)
        shared = np.minimum(self._counts, mine).sum(axis=1)
        bound = 2.0 * shared / np.maximum(self._lengths + len(word), 1)
        matcher = SequenceMatcher()
        matcher.set_seq2(word)
        best: tuple[float, str] | None = None
        for i in np.argsort(-bound, kind="stable").tolist():
            if bound[i] < CUTOFF or (best is not None and bound[i] < best[0]):
                break
            name = self.names[i]
            matcher.set_seq1(name)
            if matcher.real_quick_ratio() < CUTOFF:
                continue
            ratio = matcher.ratio()
            if ratio >= CUTOFF and (best is None or (ratio, name) > best):
                best = (ratio, name)
        return best[1] if best else None
