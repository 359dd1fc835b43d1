"""The installed Chromium, headless, driven over the DevTools protocol on a pipe.

Why the DevTools protocol directly and not Playwright: Playwright for Python drives the browser through a
Node.js driver process of its own (one more process to start, to feed and to leave behind, some tens of
megabytes, and part of every cold start), and it is one more large dependency; its own browser download
cannot work here anyway. The protocol is what Playwright speaks to Chromium underneath; spoken directly
over `--remote-debugging-pipe`, there is no DevTools port on the machine for another local user to
reach, no new dependency, and the launch flags and the targets (pages, pop-ups, frames, workers) are
ours to control exactly.

`find_chromium(settings)`: `METASEARCH_CHROMIUM` (setting `chromium`) when set, else the first of
chromium, chromium-browser, google-chrome on the PATH. `Chromium.launch` starts it in a process group
of its own, with a throw-away profile, `PR_SET_PDEATHSIG` (Linux) so it dies with this process, and is
closed by `close()` (the group killed, the profile removed); `kill_all_at_exit` is the last resort at
interpreter exit.
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable
from typing import Any

from plugin.infra import memo

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
LAUNCH_TIMEOUT_S = 20.0
MAX_MESSAGE = 256 * 1024 * 1024  # a DevTools message (a page's HTML comes back in one)
_live: dict[int, "Chromium"] = {}  # pid -> browser, killed at interpreter exit if still running


class BrowserGone(Exception):
    """The browser closed its end (crashed, killed, or closed by us)."""


class ProtocolError(Exception):
    """A DevTools command failed: the browser's own error message."""

    def __init__(self, method: str, error: dict[str, Any]):
        super().__init__(f"{method}: {error.get('message', error)}")
        self.method = method
        self.error = error


def find_chromium(configured: str | None) -> tuple[str | None, str]:
    """(the browser's path, "") or (None, why none can be used). `configured`: METASEARCH_CHROMIUM."""
    if configured:
        path = configured if os.sep in configured else shutil.which(configured)
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return path, ""
        return None, f"METASEARCH_CHROMIUM={configured} is not an executable file"
    for name in CANDIDATES:
        path = shutil.which(name)
        if path:
            return path, ""
    return None, ("no Chromium was found (set METASEARCH_CHROMIUM to its path, or install it: apt-get install "
                  "chromium)")


# The user agent's platform part, as Chrome writes it on each system (its client hints say the same).
_OS_TOKENS = {"linux": "X11; Linux x86_64", "darwin": "Macintosh; Intel Mac OS X 10_15_7",
              "win32": "Windows NT 10.0; Win64; x64"}


@memo.register
@functools.lru_cache(maxsize=8)
def installed_version(executable: str) -> str | None:
    """The browser's version (`150.0.7871.100`) from `--version`, or None when it does not say."""
    try:
        out = subprocess.run([executable, "--version"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return next((word for word in out.split() if word[:1].isdigit() and "." in word), None)


def user_agent(version: str | None) -> str | None:
    """The user agent of Chrome of this version on this system, as Chrome reduces it (`Chrome/150.0.0.0`).
    Headless Chromium says `HeadlessChrome/…`, the plainest sign of a headless browser, which sites turn
    away; its client hints (`sec-ch-ua`: Chromium and the version; the platform) already tell the same
    story as this, so only the user agent is set."""
    token = _OS_TOKENS.get("linux" if sys.platform.startswith("linux") else sys.platform)
    if not version or token is None:
        return None
    major = version.split(".", 1)[0]
    return f"Mozilla/5.0 ({token}) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{major}.0.0.0 Safari/537.36"


def launch_flags(deny_proxy_port: int, profile: str, agent: str | None = None) -> list[str]:
    """Headless, no background traffic, and no way out but the proxy: every request goes to a proxy on
    127.0.0.1 (loopback addresses too: `<-loopback>`), the browser resolves no name itself (every name
    maps to NOTFOUND; the proxy resolves), no QUIC, WebRTC only through the proxy."""
    flags = [
        "--headless", "--remote-debugging-pipe", f"--user-data-dir={profile}", "--no-startup-window",
        f"--proxy-server=http://127.0.0.1:{deny_proxy_port}", "--proxy-bypass-list=<-loopback>",
        "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
        "--disable-quic", "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
        "--webrtc-ip-handling-policy=disable_non_proxied_udp",
        "--no-first-run", "--no-default-browser-check", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--disable-default-apps", "--disable-extensions",
        "--disable-breakpad", "--disable-crash-reporter", "--no-pings", "--disable-domain-reliability",
        "--disable-client-side-phishing-detection", "--disable-background-timer-throttling",
        "--disable-renderer-backgrounding", "--disable-backgrounding-occluded-windows", "--disable-hang-monitor",
        "--disable-features=Translate,OptimizationHints,MediaRouter,DialMediaRouteProvider,HttpsUpgrades,"
        "HttpsFirstBalancedModeAutoEnable,AutofillServerCommunication,CertificateTransparencyComponentUpdater,"
        "InterestFeedContentSuggestions,PrivacySandboxSettings4,NetworkTimeServiceQuerying,"
        "DnsOverHttps,AsyncDns,PreloadingHeuristicsMLModel,Prerender2",
        "--dns-prefetch-disable", "--deny-permission-prompts", "--noerrdialogs", "--password-store=basic",
        "--use-mock-keychain", "--disable-gpu", "--disable-dev-shm-usage", "--mute-audio", "--hide-scrollbars",
        "--window-size=1280,2000", "--js-flags=--max-old-space-size=512",
    ]
    if agent:
        flags.append(f"--user-agent={agent}")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        flags.append("--no-sandbox")  # Chromium will not start as root with its sandbox
    return flags


def _prctl() -> Callable[..., int] | None:
    """libc's prctl, looked up in the parent: the child between fork and exec imports nothing."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def _child_setup(command_fd: int, reply_fd: int) -> Callable[[], None]:
    """In the child, before exec: the DevTools pipe on fds 3 and 4, and death with the parent (Linux)."""
    prctl = _prctl()

    def setup() -> None:
        os.dup2(command_fd, 3)
        os.dup2(reply_fd, 4)
        if prctl is not None:
            prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: killed when the thread that started it ends

    return setup


class Connection:
    """DevTools messages over the pipe: JSON, each ended by a NUL byte. Commands get their answer;
    events go to the listener of their session (None: the browser's own)."""

    def __init__(self, reader: asyncio.StreamReader, transport: asyncio.WriteTransport):
        self._reader = reader
        self._transport = transport
        self._next = 0
        self._pending: dict[int, tuple[str, asyncio.Future]] = {}
        self.listeners: dict[str | None, Callable[[str, dict], None]] = {}
        self.closed = asyncio.get_running_loop().create_future()
        self._task = asyncio.get_running_loop().create_task(self._read())

    async def send(self, method: str, params: dict | None = None, *, session: str | None = None,
                   timeout: float | None = None) -> dict:
        if self.closed.done():
            raise BrowserGone("the browser is gone")
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        future = asyncio.get_running_loop().create_future()
        self._pending[self._next] = (method, future)
        try:
            self._transport.write(json.dumps(message).encode() + b"\0")
        except (OSError, RuntimeError) as exc:
            self._pending.pop(self._next, None)
            raise BrowserGone(f"the browser's pipe is closed: {exc}") from None
        ident = self._next
        try:
            if timeout is None:
                return await future
            return await asyncio.wait_for(future, timeout)
        finally:
            self._pending.pop(ident, None)

    def notify(self, method: str, params: dict | None = None, *, session: str | None = None) -> None:
        """A command whose answer nobody waits for (continuing a paused request, closing a pop-up)."""
        task = asyncio.get_running_loop().create_task(self.send(method, params, session=session, timeout=10))
        task.add_done_callback(_quiet)

    async def _read(self) -> None:
        try:
            while True:
                raw = await self._reader.readuntil(b"\0")
                message = json.loads(raw[:-1])
                ident = message.get("id")
                if ident is not None:
                    method, future = self._pending.get(ident, ("", None))
                    if future is not None and not future.done():
                        if "error" in message:
                            future.set_exception(ProtocolError(method, message["error"]))
                        else:
                            future.set_result(message.get("result", {}))
                    continue
                listener = self.listeners.get(message.get("sessionId"))
                if listener is not None:
                    try:
                        listener(message.get("method", ""), message.get("params", {}))
                    except Exception:  # noqa: BLE001 - one listener's bug must not stop the connection
                        from plugin.infra.logs import get_logger

                        get_logger("metasearch.render").exception("DevTools event %s", message.get("method"))
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, ValueError, OSError):
            pass
        except asyncio.CancelledError:
            pass
        finally:
            self._fail_all()

    def _fail_all(self) -> None:
        if not self.closed.done():
            self.closed.set_result(None)
        for method, future in list(self._pending.values()):
            if not future.done():
                future.set_exception(BrowserGone(f"the browser went away during {method}"))
        self._pending.clear()

    def close(self) -> None:
        self._task.cancel()
        self._transport.close()
        self._fail_all()


def _quiet(task: asyncio.Task) -> None:
    if not task.cancelled():
        task.exception()  # a late answer to a page already gone: nothing to do


# Chromium puts a Unix socket at <TMPDIR>/org.chromium.Chromium.XXXXXX/SingletonSocket and will not start
# when that path is longer than a socket address holds (107 bytes on Linux): a long TMPDIR (macOS's
# /var/folders/…, a test runner's) must not stop renders. The browser's TMPDIR is its profile folder, kept
# short enough.
SOCKET_PATH_MAX = 107
SOCKET_TAIL = len("/org.chromium.Chromium.XXXXXX/SingletonSocket")


def profile_folder() -> str:
    """A new, empty profile folder: in the temporary directory when the browser's socket path fits under
    it, else in /tmp."""
    base = tempfile.gettempdir()
    room = SOCKET_PATH_MAX - SOCKET_TAIL - len("/metasearch-chromium-XXXXXXXX")
    if len(os.fsencode(base)) > room and os.access("/tmp", os.W_OK):
        base = "/tmp"
    return tempfile.mkdtemp(prefix="metasearch-chromium-", dir=base)


class Chromium:
    """One running browser: its process (a group of its own), profile folder and DevTools connection."""

    def __init__(self, process: asyncio.subprocess.Process, profile: str, connection: Connection, version: str):
        self.process = process
        self.pid = process.pid
        self.profile = profile
        self.connection = connection
        self.version = version
        _live[self.pid] = self

    @classmethod
    async def launch(cls, executable: str, *, deny_proxy_port: int, timeout: float = LAUNCH_TIMEOUT_S) -> "Chromium":
        agent = user_agent(await asyncio.to_thread(installed_version, executable))
        profile = profile_folder()
        command_read, command_write = os.pipe()
        reply_read, reply_write = os.pipe()
        # Out of the way of 3 and 4, which the child's dup2 writes over.
        child_command = _high_fd(command_read)
        child_reply = _high_fd(reply_write)
        log = open(os.path.join(profile, "stderr.log"), "wb")
        try:
            process = await asyncio.create_subprocess_exec(
                executable, *launch_flags(deny_proxy_port, profile, agent),
                stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL, stderr=log,
                env={**os.environ, "TMPDIR": profile},
                preexec_fn=_child_setup(child_command, child_reply), close_fds=False, start_new_session=True)
        except OSError as exc:
            for fd in (command_read, command_write, reply_read, reply_write, child_command, child_reply):
                _close(fd)
            log.close()
            shutil.rmtree(profile, ignore_errors=True)
            raise BrowserGone(f"{executable} could not be started: {exc}") from None
        finally:
            log.close()
        for fd in (command_read, reply_write, child_command, child_reply):
            _close(fd)
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=MAX_MESSAGE)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(reply_read, "rb", 0))
        transport, _ = await loop.connect_write_pipe(asyncio.Protocol, os.fdopen(command_write, "wb", 0))
        connection = Connection(reader, transport)  # type: ignore[arg-type]
        try:
            version = await connection.send("Browser.getVersion", timeout=timeout)
        except (BrowserGone, asyncio.TimeoutError, TimeoutError, ProtocolError) as exc:
            connection.close()
            _kill_group(process.pid)
            await process.wait()
            tail = _tail(os.path.join(profile, "stderr.log"))
            shutil.rmtree(profile, ignore_errors=True)
            why = "did not answer in time" if isinstance(exc, (asyncio.TimeoutError, TimeoutError)) else "exited"
            raise BrowserGone(f"{executable} {why} at start-up" + (f": {tail}" if tail else "")) from None
        return cls(process, profile, connection, version.get("product", ""))

    @property
    def alive(self) -> bool:
        return self.process.returncode is None and not self.connection.closed.done()

    async def close(self) -> None:
        """Ask the browser to close, then kill its process group whatever it did, and remove the profile."""
        if self.alive:
            try:
                await self.connection.send("Browser.close", timeout=2.0)
            except (BrowserGone, ProtocolError, asyncio.TimeoutError, TimeoutError):
                pass
        self.connection.close()
        _kill_group(self.pid)
        try:
            await asyncio.wait_for(self.process.wait(), 5.0)
        except (asyncio.TimeoutError, TimeoutError):
            pass
        _live.pop(self.pid, None)
        shutil.rmtree(self.profile, ignore_errors=True)

    def kill_now(self) -> None:
        """From outside any event loop (interpreter exit): the process group killed, the profile removed."""
        _kill_group(self.pid)
        _live.pop(self.pid, None)
        shutil.rmtree(self.profile, ignore_errors=True)


def _high_fd(fd: int) -> int:
    import fcntl

    return fcntl.fcntl(fd, fcntl.F_DUPFD, 10)


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


def _kill_group(pid: int) -> None:
    """SIGKILL to the browser's process group (its renderers, GPU and zygote processes included)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _tail(path: str, chars: int = 300) -> str:
    try:
        with open(path, "rb") as handle:
            lines = [line for line in handle.read().decode("utf-8", "replace").splitlines()
                     if line.strip() and "dbus" not in line and "unexpected operator" not in line]
    except OSError:
        return ""
    return " | ".join(lines[-3:])[-chars:]


@atexit.register
def kill_all_at_exit() -> None:
    for browser in list(_live.values()):
        browser.kill_now()
