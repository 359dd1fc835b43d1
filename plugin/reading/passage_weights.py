"""The passage ranker's weights (plugin.reading.passages), fitted by
`python scripts/passage_bench.py --corpus ../shared/article-corpus --fit`: pairwise logistic regression
(L2 0.1) on all 240 dev questions of the article corpus (Markdown), windows of
120 characters, soft-match threshold 0.45. Generated: edit by refitting, not by hand;
`--cv 10` fits them inside each fold to estimate how they do on unseen articles.
"""

LEXICAL_WEIGHTS = {
    "bm25": 1.79,
    "proximity": 2.128,
    "context": 1.539,
    "heading": 0.7584,
    "cover": 2.162,
    "lead": 0.3751,
    "typed": 0.926,
    "typed_bm25": 0.6549,
    "typed_proximity": 0.752,
    "typed_context": 1.569,
    "typed_heading": 1.035,
    "typed_cover": 0.8943
}

MEANING_WEIGHTS = {
    "bm25": 0.9041,
    "proximity": 1.108,
    "context": 1.448,
    "heading": 0.7874,
    "cover": 1.435,
    "lead": 0.2984,
    "typed": 0.8655,
    "typed_bm25": 0.3371,
    "typed_proximity": 0.3875,
    "typed_context": 1.629,
    "typed_heading": 1.084,
    "typed_cover": 0.6776,
    "soft_cover": 1.737,
    "soft_proximity": 1.793,
    "typed_soft_proximity": 0.7393
}
