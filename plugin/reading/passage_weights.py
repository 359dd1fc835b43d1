"""The passage ranker's weights (plugin.reading.passages), fitted by
`python scripts/passage_bench.py --corpus ../shared/article-corpus --fit`: pairwise logistic regression
(L2 0.1) on all 240 dev questions of the article corpus (Markdown), windows of
120 characters, soft-match threshold 0.45. Generated: edit by refitting, not by hand;
`--cv 10` fits them inside each fold to estimate how they do on unseen articles.
"""

LEXICAL_WEIGHTS = {
    "bm25": 1.762,
    "proximity": 2.107,
    "context": 1.552,
    "heading": 0.6817,
    "cover": 2.151,
    "lead": 0.3581,
    "typed": 0.9355,
    "typed_bm25": 0.6838,
    "typed_proximity": 0.775,
    "typed_context": 1.503,
    "typed_heading": 1.218,
    "typed_cover": 0.9408
}

MEANING_WEIGHTS = {
    "bm25": 0.8831,
    "proximity": 1.093,
    "context": 1.474,
    "heading": 0.7161,
    "cover": 1.423,
    "lead": 0.2813,
    "typed": 0.8782,
    "typed_bm25": 0.3548,
    "typed_proximity": 0.3952,
    "typed_context": 1.55,
    "typed_heading": 1.243,
    "typed_cover": 0.708,
    "soft_cover": 1.718,
    "soft_proximity": 1.767,
    "typed_soft_proximity": 0.7766
}
