"""The passage ranker's weights (plugin.reading.passages), fitted by
`python scripts/passage_bench.py --corpus ../shared/article-corpus --fit`: pairwise logistic regression
(L2 0.1) on all 240 dev questions of the article corpus (Markdown), windows of
120 characters, soft-match threshold 0.45. Generated: edit by refitting, not by hand;
`--cv 10` fits them inside each fold to estimate how they do on unseen articles.
"""

LEXICAL_WEIGHTS = {
    "bm25": 1.735,
    "proximity": 2.084,
    "context": 1.544,
    "heading": 0.6788,
    "cover": 2.111,
    "lead": 0.3676,
    "typed": 0.9404,
    "typed_bm25": 0.6992,
    "typed_proximity": 0.7928,
    "typed_context": 1.491,
    "typed_heading": 1.192,
    "typed_cover": 0.9437
}

MEANING_WEIGHTS = {
    "bm25": 0.8731,
    "proximity": 1.085,
    "context": 1.462,
    "heading": 0.717,
    "cover": 1.396,
    "lead": 0.2937,
    "typed": 0.8802,
    "typed_bm25": 0.3625,
    "typed_proximity": 0.4052,
    "typed_context": 1.538,
    "typed_heading": 1.23,
    "typed_cover": 0.7091,
    "soft_cover": 1.699,
    "soft_proximity": 1.754,
    "typed_soft_proximity": 0.7984
}
