"""`metasearch serve`: one shared search pool over HTTP for many agents.

GET /search?q=&limit=&engines=&region=&time_range=&site=&safesearch=&no_cache=1 -> SearchResponse JSON
    &allowed_domains=a.com,b.org or &blocked_domains=x.com (comma-separated, or the parameter repeated)
    &category=web|news &page=N &user_location=DE
GET /health  -> {"status": "ok", ...}
GET /metrics -> Prometheus text format
"""

from __future__ import annotations

from aiohttp import web

from plugin.errors import SearchError
from plugin.infra.metrics import Metrics
from plugin.pipeline.searcher import Searcher
from plugin.settings import Settings
from plugin.version import VERSION

SEARCHER = web.AppKey("searcher", Searcher)
METRICS = web.AppKey("metrics", Metrics)


async def search_handler(request: web.Request) -> web.Response:
    searcher = request.app[SEARCHER]
    metrics = request.app[METRICS]
    args = request.query
    try:
        response = await searcher.search(
            args.get("q", args.get("query")), limit=args.get("limit"), engines=args.get("engines"),
            region=args.get("region"), time_range=args.get("time_range"), site=args.get("site"),
            safesearch=args.get("safesearch"), cache=args.get("no_cache", "") not in ("1", "true", "yes"),
            allowed_domains=args.getall("allowed_domains", None), blocked_domains=args.getall("blocked_domains", None),
            category=args.get("category"), page=args.get("page"), user_location=args.get("user_location"))
    except SearchError as exc:
        metrics.bad_input()
        return web.json_response(exc.to_dict(), status=400)
    metrics.observe(response)
    return web.Response(text=response.model_dump_json(), content_type="application/json")


async def health_handler(request: web.Request) -> web.Response:
    searcher = request.app[SEARCHER]
    return web.json_response({"status": "ok", "version": VERSION, "state": searcher.state.backend,
                              "warnings": list(searcher.state.warnings)})


async def metrics_handler(request: web.Request) -> web.Response:
    return web.Response(text=request.app[METRICS].render(), content_type="text/plain",
                        headers={"X-Content-Type-Options": "nosniff"})


def build_app(settings: Settings, searcher: Searcher | None = None) -> web.Application:
    app = web.Application()
    app[SEARCHER] = searcher or Searcher(settings)
    app[METRICS] = Metrics()
    app.router.add_get("/search", search_handler)
    app.router.add_get("/health", health_handler)
    app.router.add_get("/metrics", metrics_handler)

    async def close(app: web.Application) -> None:
        await app[SEARCHER].close()

    app.on_cleanup.append(close)
    return app


def serve(settings: Settings, host: str = "127.0.0.1", port: int = 8080) -> None:
    import logging

    from plugin.infra.logs import configure

    configure(getattr(logging, settings.log.upper(), logging.WARNING))
    web.run_app(build_app(settings), host=host, port=port, print=None)
