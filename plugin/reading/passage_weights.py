"""The passage ranker's weights (plugin.reading.passages), fitted by
`python scripts/passage_bench.py --corpus ../shared/article-corpus --fit`: pairwise logistic regression
(L2 0.1) on all 240 dev questions of the article corpus (Markdown), windows of
120 characters, soft-match threshold 0.45. Generated: edit by refitting, not by hand;
`--cv 10` fits them inside each fold to estimate how they do on unseen articles.
"""

LEXICAL_WEIGHTS = {
    "bm25": 1.761,
    "proximity": 2.103,
    "context": 1.536,
    "heading": 0.6679,
    "cover": 2.131,
    "lead": 0.3628,
    "typed": 0.9403,
    "typed_bm25": 0.6961,
    "typed_proximity": 0.7862,
    "typed_context": 1.552,
    "typed_heading": 1.179,
    "typed_cover": 0.9363
}

MEANING_WEIGHTS = {
    "bm25": 0.89,
    "proximity": 1.097,
    "context": 1.449,
    "heading": 0.7059,
    "cover": 1.412,
    "lead": 0.2884,
    "typed": 0.8803,
    "typed_bm25": 0.3564,
    "typed_proximity": 0.3978,
    "typed_context": 1.606,
    "typed_heading": 1.217,
    "typed_cover": 0.7031,
    "soft_cover": 1.715,
    "soft_proximity": 1.769,
    "typed_soft_proximity": 0.7884
}
