"""Measuring quality offline: recordings (vcrpy cassettes), replay, the real-page corpus, metrics, baselines."""
