"""`plugin.render`: renderings of responses for models, importable by this short name.

    from plugin.render import anthropic_search_results
    blocks = anthropic_search_results(response)  # Anthropic search_result content blocks, citations on

The functions live in plugin/surfaces/render.py; this module only re-exports them.
"""

from plugin.surfaces.render import (anthropic_search_results, render_for_model, render_page_for_model,
                                    render_passages_for_model, render_verify)

__all__ = ["anthropic_search_results", "render_for_model", "render_page_for_model", "render_passages_for_model",
           "render_verify"]
