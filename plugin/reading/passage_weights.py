"""The passage ranker's weights (plugin.reading.passages), fitted by
`python scripts/passage_bench.py --corpus ../shared/article-corpus --fit`: pairwise logistic regression
(L2 0.1) on all 240 dev questions of the article corpus (Markdown), windows of
120 characters, soft-match threshold 0.45. Generated: edit by refitting, not by hand;
`--cv 10` fits them inside each fold to estimate how they do on unseen articles.
"""

LEXICAL_WEIGHTS = {
    "bm25": 1.733,
    "proximity": 2.088,
    "context": 1.547,
    "heading": 0.6987,
    "cover": 2.144,
    "lead": 0.3581,
    "typed": 0.9349,
    "typed_bm25": 0.6847,
    "typed_proximity": 0.7849,
    "typed_context": 1.498,
    "typed_heading": 1.219,
    "typed_cover": 0.9471
}

MEANING_WEIGHTS = {
    "bm25": 0.8714,
    "proximity": 1.089,
    "context": 1.47,
    "heading": 0.7303,
    "cover": 1.419,
    "lead": 0.2811,
    "typed": 0.8776,
    "typed_bm25": 0.3532,
    "typed_proximity": 0.4021,
    "typed_context": 1.545,
    "typed_heading": 1.244,
    "typed_cover": 0.7121,
    "soft_cover": 1.706,
    "soft_proximity": 1.753,
    "typed_soft_proximity": 0.7809
}
