"""Page text an engine sent (plugin.reading.sent): images and link targets go outside code blocks, code
blocks stay as sent (their blank lines too), whatever their fences; any text is tidied without an error."""

from __future__ import annotations

from examples import scaled
from hypothesis import HealthCheck, given, settings as hypothesis_settings, strategies as st

from plugin.reading.sent import tidy_sent_text


def test_links_keep_their_words_and_images_go_outside_code_blocks():
    text = "Intro ![img](x.png) [link](http://a) [](http://e) []\n```\n[keep](this) ![x](y)\n```\nafter [l](u)"
    assert tidy_sent_text(text) == "Intro  link\n```\n[keep](this) ![x](y)\n```\nafter l"
    assert tidy_sent_text("[outer [inner](a)](b)") == "outer inner"
    assert tidy_sent_text("a\n\n\n\n\nb  \nc") == "a\n\nb\nc"


def test_a_fence_is_closed_only_by_the_same_character_at_least_as_long():
    assert tidy_sent_text("~~~\n```\n[a](b)\n~~~\n[c](d)") == "~~~\n```\n[a](b)\n~~~\nc"
    assert tidy_sent_text("````\n```\n[a](b)\n````\n[c](d)") == "````\n```\n[a](b)\n````\nc"
    assert tidy_sent_text("```\n[a](b)\n`````\n[c](d)") == "```\n[a](b)\n`````\nc"


def test_an_indented_fence_is_a_fence_and_an_unclosed_one_runs_to_the_end():
    assert tidy_sent_text("   ```\n[a](b)\n   ```\n[c](d)") == "```\n[a](b)\n   ```\nc"
    assert tidy_sent_text("```\nunclosed [a](b) ![i](j)") == "```\nunclosed [a](b) ![i](j)"
    assert tidy_sent_text("    ```\n[a](b)") == "```\na"  # four spaces: indented text, not a fence


def test_a_one_line_code_span_with_backticks_inside_opens_no_fence():
    # CommonMark: a backtick fence's info string holds no backtick; such a line is a code span, and the
    # links after it are still prose (they had been kept, targets and all, as if inside a code block).
    assert tidy_sent_text("```const s = ``;``` [a](b)\n[c](d)") == "```const s = ``;``` a\nc"
    assert tidy_sent_text("```py\n[a](b)\n```\n[c](d)") == "```py\n[a](b)\n```\nc"


_PROSE = st.lists(st.sampled_from(["[a](b)", "![i](j)", "text ", "[", "]", "(", ")", "\\\n", "   ", "\n",
                                   "\n\n\n"]), max_size=20).map("".join)
_CODE = st.lists(st.sampled_from(["[a](b)", "![i](j)", "x = 1", "  ", "\n", "~~~", "``"]), max_size=10).map(
    "".join).filter(lambda code: "```" not in code)


@hypothesis_settings(max_examples=scaled(100), deadline=None,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(before=_PROSE, code=_CODE, after=_PROSE, fence=st.sampled_from(["```", "````", "~~~~"]))
def test_any_sent_text_is_tidied_and_a_code_block_is_kept_as_sent(before, code, after, fence):
    code = code.replace("~~~", "~~") if fence.startswith("~") else code
    block = f"{fence}py\n{code}\n{fence}\n"
    tidied = tidy_sent_text(f"{before}\n{block}{after}")
    assert block.strip("\n") in tidied  # blank lines inside code included
