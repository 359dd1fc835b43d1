"""What the engines see: our engine request, our page read and Chromium, side by side.

    python scripts/fingerprint.py                      # table: ours beside the live Chromium (or the reference)
    python scripts/fingerprint.py --json               # the captures as JSON
    python scripts/fingerprint.py --record-reference   # store Chromium's capture in bench/fingerprints/

A loopback TLS listener with a throw-away certificate (trusted through METASEARCH_CA_BUNDLE) records the
TLS ClientHello, the HTTP/2 SETTINGS, WINDOW_UPDATE and pseudo-header order, and the headers of:
- our engine request: `metasearch search … --engines duckduckgo-html --endpoint duckduckgo-html=<listener>`
  (DuckDuckGo's form POST);
- our page read: `metasearch fetch <listener>/page` (METASEARCH_ALLOW_PRIVATE_HOSTS=127.0.0.1/32);
- the installed Chromium (METASEARCH_CHROMIUM, else `chromium` on the PATH) opening the listener's page and
  submitting its form; without one, the stored reference (bench/fingerprints/chromium.json).
Each capture's JA4 string is printed too. The exit status is 1 when ours differ from Chromium on a compared
field (cipher suites, extension set less padding and pre_shared_key, groups, key shares, signature
algorithms, ALPN, versions, HTTP/2 SETTINGS, WINDOW_UPDATE, pseudo-header order, header order).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from plugin.bench.fingerprint import (EXTENSION_NAMES, FORM_PAGE, GROUP_NAMES, H2_SETTING_NAMES, Capture,  # noqa: E402
                                      FingerprintListener, capture_chromium, chromium_version, differences,
                                      find_chromium, header_order, is_grease, load_reference, pick)

REFERENCE = ROOT / "bench" / "fingerprints" / "chromium.json"


def throwaway_certificate(folder: str) -> tuple[str, str, str]:
    """(certificate, key, CA bundle) files for 127.0.0.1, made for this run."""
    import trustme

    ca = trustme.CA()
    issued = ca.issue_cert("127.0.0.1", "localhost")
    cert, key, bundle = (os.path.join(folder, name) for name in ("cert.pem", "key.pem", "ca.pem"))
    issued.cert_chain_pems[0].write_to_path(cert)
    issued.private_key_pem.write_to_path(key)
    ca.cert_pem.write_to_path(bundle)
    return cert, key, bundle


def run_ours(url: str, bundle: str, state: str) -> None:
    """Our engine request and our page read, each through the CLI as a user runs it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("METASEARCH_")}
    env.update({"METASEARCH_CA_BUNDLE": bundle, "METASEARCH_STATE_DIR": state, "METASEARCH_CACHE_TTL_S": "0",
                "METASEARCH_ALLOW_PRIVATE_HOSTS": "127.0.0.1/32", "PYTHONPATH": str(ROOT)})
    cli = [sys.executable, "-m", "plugin.surfaces.cli"]
    subprocess.run([*cli, "search", "fingerprint", "--engines", "duckduckgo-html", "--endpoint",
                    f"duckduckgo-html={url}", "--json"], env=env, capture_output=True, timeout=120, cwd=ROOT)
    subprocess.run([*cli, "fetch", f"{url}/page", "--json"], env=env, capture_output=True, timeout=120, cwd=ROOT)


def named(values: list[int], names: dict[int, str]) -> str:
    return ", ".join(names.get(v, f"0x{v:04x}") for v in values if not is_grease(v))


def rows(capture: Capture | None) -> dict[str, str]:
    if capture is None:
        return {}
    hello = capture.hello
    comparable = hello.comparable()
    return {
        "JA4": hello.ja4(),
        "cipher suites": f"{len(comparable['cipher_suites'])}: " + ",".join(f"{c:04x}" for c in comparable["cipher_suites"]),
        "extensions": f"{len(comparable['extensions'])}: " + named(comparable["extensions"], EXTENSION_NAMES),
        "groups": named(hello.groups, GROUP_NAMES),
        "key shares": named(hello.key_shares, GROUP_NAMES),
        "signature algorithms": ",".join(f"{s:04x}" for s in hello.signature_algorithms),
        "ALPN": ", ".join(hello.alpn),
        "protocol": capture.protocol,
        "HTTP/2 SETTINGS": ", ".join(f"{H2_SETTING_NAMES.get(k, k)}={v}" for k, v in capture.h2_settings),
        "WINDOW_UPDATE": str(capture.h2_window_update),
        "pseudo-headers": " ".join(capture.pseudo_headers),
        **{f"{i + 1:>2}. {name}": value for i, (name, value) in enumerate(capture.headers)},
    }


def table(columns: dict[str, Capture | None]) -> str:
    filled = {title: rows(capture) for title, capture in columns.items()}
    keys = list(dict.fromkeys(key for values in filled.values() for key in values if not key[:2].strip().isdigit()))
    width = 28
    lines = [f"{'':22} " + " | ".join(f"{title[:width]:{width}}" for title in columns)]
    for key in keys:
        cells = [filled[title].get(key, "-") for title in columns]
        lines.append(f"{key:22} " + " | ".join(f"{cell[:width]:{width}}" for cell in cells))
        for start in range(width, max(len(c) for c in cells), width):  # long values wrap
            lines.append(f"{'':22} " + " | ".join(f"{cell[start:start + width]:{width}}" for cell in cells))
    lines.append("")
    for title, capture in columns.items():
        if capture is not None:
            lines.append(f"{title} headers, in order:")
            lines += [f"  {name}: {value}" for name, value in capture.headers]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print the captures as JSON")
    parser.add_argument("--record-reference", action="store_true",
                        help=f"store the live Chromium's captures in {REFERENCE.relative_to(ROOT)}")
    parser.add_argument("--chromium", help="the browser binary (default: METASEARCH_CHROMIUM, else the PATH)")
    args = parser.parse_args(argv)
    binary = args.chromium or find_chromium()
    with tempfile.TemporaryDirectory(prefix="metasearch-fingerprint-") as folder:
        cert, key, bundle = throwaway_certificate(folder)
        with FingerprintListener(cert, key, body=FORM_PAGE) as listener:
            run_ours(listener.url, bundle, os.path.join(folder, "state"))
            ours = list(listener.captures)
            chromium: list[Capture] = []
            version = None
            if binary:
                version = chromium_version(binary)
                capture_chromium(binary, listener.url + "/")
                time.sleep(0.3)
                chromium = listener.captures[len(ours):]
    engine, page = pick(ours, "POST", "/html/"), pick(ours, "GET", "/page")
    live_navigate, live_form = pick(chromium, "GET", "/"), pick(chromium, "POST", "/html/")
    if args.record_reference:
        if not (live_navigate and live_form):
            print("no Chromium capture to record (is chromium installed?)", file=sys.stderr)
            return 2
        REFERENCE.parent.mkdir(parents=True, exist_ok=True)
        REFERENCE.write_text(json.dumps({
            "browser": "Chromium", "version": version, "recorded": datetime.date.today().isoformat(),
            "how": "python scripts/fingerprint.py --record-reference (headless, a fresh profile, loopback listener)",
            "navigate": live_navigate.to_json(), "form_post": live_form.to_json()}, indent=1) + "\n")
        print(f"recorded Chromium {version} in {REFERENCE}")
    if live_navigate is not None:
        reference_navigate, reference_form, source = live_navigate, live_form, f"Chromium {version} (live)"
    else:
        facts, reference_navigate, reference_form = load_reference(REFERENCE)
        source = f"Chromium {facts['version']} (recorded {facts['recorded']})"
    columns = {"our engine request": engine, "our page read": page, f"{source}: navigate": reference_navigate,
               f"{source}: form POST": reference_form}
    if args.json:
        print(json.dumps({title: capture.to_json() if capture else None for title, capture in columns.items()},
                         indent=1))
    else:
        print(table(columns))
    problems = []
    for title, capture, reference in (("engine request", engine, reference_form), ("page read", page, reference_navigate)):
        if capture is None:
            problems.append(f"our {title}: nothing captured")
            continue
        for field, (mine, theirs) in differences(capture, reference).items():
            problems.append(f"our {title}: {field} differs: {mine} vs {theirs}")
        if header_order(capture) != header_order(reference):
            problems.append(f"our {title}: header order differs from Chromium's")
    print("\n" + ("\n".join(problems) if problems else "ours and Chromium's agree on every compared field"),
          file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
