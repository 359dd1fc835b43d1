"""The answer cache: a repeated search within the TTL is answered from the state store.

The key covers everything that decides the answer: the normalised query, the engines by upstream (the
same engine behind another endpoint may answer differently), and every option.
"""

from __future__ import annotations

import hashlib
import json
from typing import Sequence

from plugin.pipeline.plan import SearchPlan
from plugin.settings import Settings


def cache_key(settings: Settings, plan: SearchPlan, engine_names: Sequence[str]) -> str:
    request = plan.request
    identity = {
        "q": " ".join(request.query.casefold().split()),
        "engines": sorted(settings.upstream(name) for name in engine_names),
        "limit": request.limit, "region": request.region or settings.region,
        "time": plan.operators.time_range, "site": plan.operators.site,
        "safe": request.safesearch or settings.safesearch,
        "allowed": list(plan.operators.allowed_domains), "blocked": list(plan.operators.blocked_domains),
        "category": request.category, "page": request.page,
    }
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()
