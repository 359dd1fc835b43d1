"""The meaning signal beside the words: static token vectors that the `wordllama` package ships in its wheel.

`wordllama` (MIT; `pip install 'metasearch[semantic]'`, part of `.[all]`) carries `l2_supercat_256`: one
256-dimension vector for each of the 32,000 tokens of the Llama 2 tokenizer (16 MB of float16 weights in
`wordllama/weights/`, the tokenizer in `wordllama/tokenizers/`). Its own `load()` looks for the tokenizer
under `tokenizer/` and, not finding it there, reaches for a hub; so this module never calls it: it reads the
two files from the installed package with `safetensors` and `tokenizers` and sets `HF_HUB_OFFLINE` first.
Nothing is downloaded, ever; without the package the ranker is lexical only and says so (`status()`).

What the passage ranker asks of it (`plugin.reading.passages`): `word_vectors(words)`, one unit vector
per word (the mean of its tokens' vectors), cached by word, so that a question word the page does not hold
literally gets credit from its most similar word in a sentence ("countries" for "nations", "began" for
"start").

Loaded once, lazily, on the first ranking that asks (never at `import plugin` or MCP start), under a lock:
about 0.5 s of CPU and 57 MB resident (`scripts/meaning_cost.py` measures both).
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import threading
import time
from pathlib import Path

from plugin.infra import memo

WEIGHTS = "weights/l2_supercat_256.safetensors"
TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"
_WORD_CACHE = 50_000  # words kept with their vectors (1 KB each)

_lock = threading.Lock()


class Meaning:
    """The token vectors and their tokenizer, read from the installed wordllama package."""

    def __init__(self, folder: Path):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing here may reach a hub
        os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")  # a page's few hundred words: threads cost more
        import numpy as np
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        started = time.perf_counter()
        tensors = load_file(str(folder / WEIGHTS))
        if len(tensors) != 1:
            raise ValueError(f"expected one tensor in {WEIGHTS}, found {sorted(tensors)}")
        table = next(iter(tensors.values())).astype(np.float32)
        self.tokenizer = Tokenizer.from_file(str(folder / TOKENIZER))
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()
        self.table = table
        self.dimensions = table.shape[1]
        self.source = f"wordllama l2_supercat_256 ({table.shape[0]} tokens x {table.shape[1]})"
        self.load_seconds = time.perf_counter() - started
        self._np = np
        self._rows: dict[str, int] = {}  # word -> its row of _matrix
        self._matrix = np.zeros((1024, self.dimensions), dtype=np.float32)
        self._words_lock = threading.Lock()
        self._joins_words = _joins_words(self.tokenizer)  # whether token_ids may encode a page's words at once

    def token_ids(self, words: list[str]) -> list[list[int]]:
        """Each word's token ids, as the tokenizer gives them for the word alone. Called word by word the
        tokenizer costs ~9 µs a word (a page of new words: ~3.5 ms), so the words are encoded as one text
        and cut where each word's first token (the one starting with the `▁` put before each word) begins;
        if any token spans two words (there would then be fewer such tokens than words) or the tokenizer is
        not one that puts a `▁` before each word (`_joins_words`), each word is encoded alone."""
        if not self._joins_words:
            return self._encoded_alone(words)
        found: list[list[int]] = [[] for _ in words]
        alone = [k for k, word in enumerate(words) if " " in word or MARK in word]  # not one word once joined
        together = [k for k, word in enumerate(words) if word and " " not in word and MARK not in word]
        if together:
            encoding = self.tokenizer.encode(" ".join(words[k] for k in together), add_special_tokens=False)
            ids = encoding.ids
            starts = [i for i, token in enumerate(encoding.tokens) if token.startswith(MARK)]
            if len(starts) == len(together) and starts[0] == 0:
                for k, start, end in zip(together, starts, starts[1:] + [len(ids)]):
                    found[k] = ids[start:end]
            else:
                alone += together
        for k, ids in zip(alone, self._encoded_alone([words[k] for k in alone])):
            found[k] = ids
        return found

    def _encoded_alone(self, words: list[str]) -> list[list[int]]:
        if not words:
            return []
        return [encoding.ids for encoding in self.tokenizer.encode_batch(words, add_special_tokens=False)]

    def word_vectors(self, words: list[str]):
        """A (len(words), dimensions) array of unit vectors, each the mean of the word's token vectors (a
        word with no token: zeros). Vectors are kept by word, in one growing matrix; when it holds
        `_WORD_CACHE` words it is emptied and starts again."""
        np = self._np
        with self._words_lock:
            missing = [w for w in dict.fromkeys(words) if w not in self._rows]
            if missing:
                if len(self._rows) + len(missing) > _WORD_CACHE:
                    self._rows.clear()
                    missing = list(dict.fromkeys(words))
                fresh = self._mean_vectors(self.token_ids(missing))
                used = len(self._rows)
                if used + len(missing) > len(self._matrix):
                    grown = np.zeros((max(2 * len(self._matrix), used + len(missing)), self.dimensions),
                                     dtype=np.float32)
                    grown[:used] = self._matrix[:used]
                    self._matrix = grown
                self._matrix[used:used + len(missing)] = fresh
                self._rows.update((w, used + k) for k, w in enumerate(missing))
            return self._matrix[[self._rows[w] for w in words]]

    def _mean_vectors(self, token_ids: list[list[int]]):
        """One unit vector per word: the mean of its tokens' vectors, normalised (zeros for a word with no
        token). Words with the same number of tokens at once: numpy's per-call overhead, paid word by word,
        cost ~30 ms per 1,000 new words (and `add.reduceat` over rows is slow too)."""
        np = self._np
        fresh = np.zeros((len(token_ids), self.dimensions), dtype=np.float32)
        by_count: dict[int, list[int]] = {}
        for k, ids in enumerate(token_ids):
            if ids:
                by_count.setdefault(len(ids), []).append(k)
        for count, rows in by_count.items():
            ids = np.array([token_ids[k] for k in rows], dtype=np.int64)  # (words, count)
            fresh[rows] = self.table[ids].mean(axis=1)
        norms = np.sqrt(np.einsum("wd,wd->w", fresh, fresh))
        fresh /= np.where(norms > 0, norms, 1.0)[:, None]
        return fresh

    def forget_words(self) -> None:
        with self._words_lock:
            self._rows.clear()


MARK = "\u2581"  # SentencePiece's word start


def _joins_words(tokenizer) -> bool:
    """The tokenizer `Meaning.token_ids` can give words joined by spaces: it puts a `▁` before the text
    and for each space (its whole normalisation), has no pre-tokenizer, and is BPE."""
    from tokenizers.models import BPE

    expected = {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": MARK},
                                                    {"type": "Replace", "pattern": {"String": " "}, "content": MARK}]}
    normalizer = tokenizer.normalizer
    return (normalizer is not None and json.loads(normalizer.__getstate__()) == expected
            and tokenizer.pre_tokenizer is None and isinstance(tokenizer.model, BPE))


def _package_folder() -> Path | None:
    """The installed wordllama package's folder, found without importing it (its import pulls in its
    configuration, pydantic models and requests, none of which is needed here)."""
    spec = importlib.util.find_spec("wordllama")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


@memo.register_table
@functools.lru_cache(maxsize=1)
def _load() -> tuple[Meaning | None, str | None]:
    """(the model, None) or (None, why not): tried once per process (a lock keeps two threads from both
    loading it)."""
    with _lock:
        folder = _package_folder()
        if folder is None:
            return None, "wordllama is not installed (pip install 'metasearch[semantic]'): passages are ranked by words only"
        missing = [name for name in (WEIGHTS, TOKENIZER) if not (folder / name).is_file()]
        if missing:
            return None, f"wordllama at {folder} lacks {', '.join(missing)}: passages are ranked by words only"
        try:
            return Meaning(folder), None
        except ImportError as error:
            return None, f"the meaning signal needs {error.name or error} (pip install 'metasearch[semantic]')"
        except (OSError, ValueError) as error:
            return None, f"wordllama's files at {folder} could not be read ({error}): passages are ranked by words only"


def model() -> Meaning | None:
    """The meaning model, loaded on the first call; None (and `status()` says why) when it cannot be."""
    return _load()[0]


def loaded() -> bool:
    """Whether a load was tried in this process (without trying one)."""
    return _load.cache_info().currsize > 0


def status() -> dict:
    """What the ranker uses: `{"available", "loaded", "source" or "reason"}` (never loads the model)."""
    if loaded():
        found, reason = _load()
        if found is not None:
            return {"available": True, "loaded": True, "source": found.source,
                    "load_seconds": round(found.load_seconds, 3)}
        return {"available": False, "loaded": False, "reason": reason}
    return {"available": _package_folder() is not None, "loaded": False}
