"""The passage ranker's weights (plugin.reading.passages), fitted by
`python scripts/passage_bench.py --corpus ../shared/article-corpus --fit`: pairwise logistic regression
(L2 0.1) on all 240 dev questions of the article corpus (Markdown), windows of
150 characters, soft-match threshold 0.45. Generated: edit by refitting, not by hand;
`--cv 10` fits them inside each fold to estimate how they do on unseen articles.
"""

LEXICAL_WEIGHTS = {
    "bm25": 1.778,
    "proximity": 2.144,
    "context": 1.58,
    "heading": 0.7584,
    "cover": 2.227,
    "lead": 0.3663,
    "typed": 0.9259,
    "typed_bm25": 0.6422,
    "typed_proximity": 0.7746,
    "typed_context": 1.621,
    "typed_heading": 1.022,
    "typed_cover": 0.8979
}

MEANING_WEIGHTS = {
    "bm25": 0.9114,
    "proximity": 1.111,
    "context": 1.494,
    "heading": 0.796,
    "cover": 1.493,
    "lead": 0.2932,
    "typed": 0.8682,
    "typed_bm25": 0.3384,
    "typed_proximity": 0.4098,
    "typed_context": 1.699,
    "typed_heading": 1.085,
    "typed_cover": 0.6881,
    "soft_cover": 1.724,
    "soft_proximity": 1.78,
    "typed_soft_proximity": 0.7603
}
