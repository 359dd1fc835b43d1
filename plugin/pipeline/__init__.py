"""One search, from the query to the cut list: plan, engine runs, relevance gate, fusion."""
