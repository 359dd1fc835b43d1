"""A page's publication date, from evidence only; otherwise none.

trafilatura asks htmldate for the date. htmldate's extensive mode takes any year in the body for it
("founded in 2005" gives 2005-01-01, "© 2023" gives 2023-01-01), so we run its fast mode
(`date_params`): meta tags (article:published_time, datePublished, DC.date …), JSON-LD, a date in the
URL, <time> and <abbr> elements, and elements whose class or id marks a date. Its last resort, the first
YYYY-MM-DD anywhere in the text, is kept only when a byline vouches for it (`vouched`): the date also
stands in the markup outside the text (an attribute, a script), in the URL, on a line with a byline word
("Published", "Posted", "发布时间" …) or in an element whose class or id marks a date or byline. When
htmldate finds nothing, a byline line near the top of the page's text with an absolute date counts
(`byline_date`: "Published on March 3, 2021 by …", "发布时间：2024年3月1日"); relative or yearless
stamps ("3 days ago", "3月1日") do not, since the page may be read long after.
"""

from __future__ import annotations

import datetime as dt
import re

from engines.dates import EARLIEST, parse_date

# Words that introduce a page's own date in a byline or dateline.
BYLINE_WORDS = re.compile(
    r"\b(?:published|posted|updated|modified|written|dated?|released|veröffentlicht|publiziert|erschienen|"
    r"aktualisiert|publié|"
    r"mis à jour|publicado|actualizado|pubblicato|aggiornato|gepubliceerd|opublikowano|опубликовано|"
    r"обновлено)\b|发布|發布|发表|發表|更新|日期|时间|時間|公開|投稿|게시|작성"
    # Arabic, Persian (matched with vowel marks and tatweel off: نُشر is نشر), Hindi, Bengali, Thai
    r"|نشر|تحديث|بتاريخ|تاريخ|تاریخ|انتشار|منتشر|بروزرسانی|به‌روزرسانی|प्रकाशित|अपडेट|दिनांक|প্রকাশিত|আপডেট|"
    r"เผยแพร่|ปรับปรุง|อัปเดต|โพสต์|วันที่", re.I)
_ARABIC_MARKS = re.compile(r"[\u0640\u064b-\u065f\u0670]")


def has_byline_word(line: str) -> bool:
    return BYLINE_WORDS.search(_ARABIC_MARKS.sub("", line)) is not None
# Class or id words of elements that hold a page's own date or byline.
DATE_MARKS = re.compile(r"date|time|byline|dateline|posted|published|pubdate|post-meta|entry-meta|article-meta",
                        re.I)
BYLINE_LINES = 40  # lines of the page's visible text looked at for a byline
BYLINE_MAX_CHARS = 160  # a longer line is a sentence that happens to hold a date, not a byline
# Two moments far apart and after any page's date: a date read the same at both is absolute. (parse_date reads
# no date after its `now`, so both lie ahead; _plausible then holds the date to today.)
_FAR_APART = (dt.datetime(2100, 1, 1), dt.datetime(2200, 6, 15))


def date_params() -> dict:
    """htmldate's options for trafilatura: fast mode, the original (not the updated) date, none after today."""
    return {"extensive_search": False, "original_date": True, "max_date": dt.date.today().isoformat()}


def _plausible(day: dt.date | None) -> bool:
    return day is not None and EARLIEST <= day <= dt.date.today() + dt.timedelta(days=1)


# Month names of bylines in other languages, as engines.dates reads them (English), and a day written
# "25." (German): "publiziert am 25. September 2018", "publié le 3 mars 2021", "3 de marzo de 2021".
_MONTH_NAMES = {
    "januar": "january", "jänner": "january", "februar": "february", "märz": "march", "mai": "may",
    "juni": "june", "juli": "july", "oktober": "october", "dezember": "december",
    "janvier": "january", "février": "february", "mars": "march", "avril": "april", "juin": "june",
    "juillet": "july", "août": "august", "septembre": "september", "octobre": "october",
    "novembre": "november", "décembre": "december",
    "enero": "january", "febrero": "february", "marzo": "march", "abril": "april", "mayo": "may",
    "junio": "june", "julio": "july", "agosto": "august", "septiembre": "september", "setiembre": "september",
    "octubre": "october", "noviembre": "november", "diciembre": "december",
}
_MONTH_WORD = re.compile(r"\b(" + "|".join(sorted(_MONTH_NAMES, key=len, reverse=True)) + r")\b", re.I)
_DAY_DOT = re.compile(r"\b(\d{1,2})\.\s+(?=[^\W\d])")
_SPANISH_DE = re.compile(r"\b(\d{1,2})\s+de\s+([^\W\d]+)\s+de\s+(\d{4})", re.I)


def _in_english(text: str) -> str:
    text = _SPANISH_DE.sub(r"\1 \2 \3", text)
    text = _MONTH_WORD.sub(lambda m: _MONTH_NAMES[m.group(1).lower()], text)
    return _DAY_DOT.sub(r"\1 ", text)


# A numeric day and month around a four-digit year: "13/04/2021", "13.04.2021", "4-13-2021". Which of the first
# two is the day is settled by the numbers when one is above 12 (or both are equal), else by the page's language.
_NUMERIC_DMY = re.compile(r"(?<![\d/.-])(\d{1,2})([/.-])(\d{1,2})\2(\d{4})(?![\d/-]|\.\d)")
# Languages (and English regions) whose numeric dates put the month first, and those that put the day first.
_MONTH_FIRST = {"en-us", "en-ph", "en-as", "en-gu", "en-mp", "en-pr", "en-um", "en-vi", "es-us"}
_DAY_FIRST_LANGUAGES = {
    "af", "ar", "az", "be", "bg", "bs", "ca", "cs", "cy", "da", "de", "el", "es", "et", "eu", "fi", "fil", "fr",
    "ga", "gl", "he", "hi", "hr", "hy", "id", "is", "it", "ka", "kk", "ms", "mk", "nb", "nl", "nn", "no", "pl", "pt",
    "ro", "ru", "sk", "sl", "sq", "sr", "sv", "th", "tr", "uk", "ur", "uz", "vi",
}


def _day_first(language: str | None) -> bool | None:
    """Whether the page's language writes numeric dates day first (True), month first (False), or is silent
    (None: plain "en", which British and American pages both declare, and languages that write the year first)."""
    if not language:
        return None
    primary, *subtags = language.strip().lower().replace("_", "-").split("-")
    # the region: two letters or three digits, after any script ("en-Latn-US")
    region = next((t for t in subtags if len(t) == 2 or (len(t) == 3 and t.isdigit())), "")
    if f"{primary}-{region}" in _MONTH_FIRST:
        return False
    if primary == "en":  # en-GB, en-AU, en-IN …: day first; plain "en" and en-CA (which writes both) are silent
        return True if region and region != "ca" else None
    return True if primary in _DAY_FIRST_LANGUAGES else None


def _numeric_reading(first: int, second: int, year: int, language: str | None) -> dt.date | None:
    """The date a numeric "first/second/year" stands for, or None when it is not one or cannot be told."""
    if first == second or first > 12:
        order = True
    elif second > 12:
        order = False
    else:
        order = _day_first(language)
    if order is None:
        return None
    day, month = (first, second) if order else (second, first)
    try:
        return dt.date(year, month, day)
    except ValueError:
        return None


def _numeric_dates_settled(text: str, language: str | None) -> str:
    """`text` with each numeric day-month-year written as ISO where it can be told, and blanked where it cannot
    (04/05/2021 on a page that does not say its language is no date, not May 4 nor April 5)."""
    def settle(match: re.Match) -> str:
        found = _numeric_reading(int(match.group(1)), int(match.group(3)), int(match.group(4)), language)
        return found.isoformat() if found is not None else " "
    return _NUMERIC_DMY.sub(settle, text)


def absolute_date(text: str, language: str | None = None) -> dt.date | None:
    """The first date in `text` when it is absolute (the same whenever it is read), else None.
    `language`: the page's language tag, which settles whether 04/05/2021 is the 4th of May or April 5."""
    text = _in_english(_numeric_dates_settled(text, language))
    first, second = (parse_date(text, now) for now in _FAR_APART)
    return first if first is not None and first == second and _plausible(first) else None


def byline_date(visible_lines: list[str], language: str | None = None) -> dt.date | None:
    """An absolute date on a byline line among the first lines of the page's text."""
    for line in visible_lines[:BYLINE_LINES]:
        if len(line) <= BYLINE_MAX_CHARS and has_byline_word(line):
            found = absolute_date(line, language)
            if found is not None:
                return found
    return None


def _in_url(url: str | None, day: dt.date) -> bool:
    """Whether the URL writes `day` as a date of its own: 2021/03/04, 2021-3-4 (one separator throughout) or
    20210304, with no digit on either side (an id 920210304 or 202103041 holds no date)."""
    if not url:
        return False
    separated = rf"{day.year}(?P<sep>[/_.-])0?{day.month}(?P=sep)0?{day.day}"
    compact = f"{day.year}{day.month:02d}{day.day:02d}"
    return re.search(rf"(?<!\d)(?:{separated}|{compact})(?!\d)", url) is not None


def page_language(tree) -> str | None:
    """The page's declared language: <html lang>, else og:locale, else a Content-Language meta tag."""
    if tree is None:
        return None
    for path in ("/html/@lang", "/html/@xml:lang", "//meta[@property='og:locale']/@content",
                 "//meta[translate(@http-equiv, 'CONTENT-LANGUAGE', 'content-language')='content-language']"
                 "/@content"):
        try:
            found = tree.xpath(path)
        except Exception:  # an odd tree (a fragment without <html>): no declared language
            found = []
        for value in found:
            value = str(value).split(",")[0].strip()
            if value:
                return value
    return None


def _a_guess(raw_html: str, url: str | None, day: dt.date, language: str | None) -> bool:
    """Whether `day` rests only on a numeric date that cannot be told apart (htmldate reads 04/05/2021 as the
    4th of May on any page): no ISO form of it in the markup or the URL, and a numeric form in the markup
    whose reading in the page's language is not `day`."""
    if day.day > 12 or day.day == day.month or day.isoformat() in raw_html or _in_url(url, day):
        return False
    for match in _NUMERIC_DMY.finditer(raw_html):
        first, second, year = int(match.group(1)), int(match.group(3)), int(match.group(4))
        if year == day.year and {first, second} == {day.day, day.month}:
            return _numeric_reading(first, second, year, language) != day
    return False


def vouched(tree, raw_html: str, url: str | None, day: dt.date) -> bool:
    """Whether htmldate's `day` rests on evidence rather than on a date that merely occurs in the body."""
    iso = day.isoformat()
    nodes = tree.xpath("//text()[not(ancestor::script) and not(ancestor::style)][contains(., $iso)]", iso=iso)
    in_text = sum(str(node).count(iso) for node in nodes)
    if in_text == 0 or raw_html.count(iso) > in_text or _in_url(url, day):
        return True  # found in another form (a meta tag, <time>, JSON-LD, a dated element), or also outside the text
    for node in nodes:
        line = next((part for part in str(node).splitlines() if iso in part), "")
        if len(line) <= BYLINE_MAX_CHARS and has_byline_word(line):
            return True
        element, depth = node.getparent(), 0
        while element is not None and depth < 4:
            marks = f"{element.get('class') or ''} {element.get('id') or ''} {element.get('itemprop') or ''}"
            if DATE_MARKS.search(marks):
                return True
            element, depth = element.getparent(), depth + 1
    return False


def publication_date(found: str | None, *, tree, raw_html: str, url: str | None,
                     visible_lines) -> dt.date | None:
    """The page's date: htmldate's `found` when evidence vouches for it, else a byline's, else None.
    `visible_lines`: a callable giving the page's visible text as lines (worked out only when needed)."""
    day = None
    if found:
        try:
            day = dt.date.fromisoformat(found[:10])
        except ValueError:
            day = None
    language = page_language(tree)
    if (_plausible(day) and vouched(tree, raw_html, url, day)  # type: ignore[arg-type]
            and not _a_guess(raw_html, url, day, language)):  # type: ignore[arg-type]
        return day
    return byline_date(visible_lines(), language)
