"""The dashboard's server: Streamlit's own (``st.App``, Starlette on uvicorn) with its door in front.

``ofc dashboard`` runs ``streamlit run dashboard/serve.py -- --db FILE``; Streamlit finds ``app``
below and serves ``app.py`` through it. :class:`AccessGuard` sees every request before Streamlit
does, so nothing is served or accepted before a visitor has signed in: no page, no websocket
session, no upload (``PUT /_stcore/upload_file/...`` used to accept files from anyone who opened
a websocket and made up an XSRF cookie). Only ``/_stcore/health`` and the sign-in page answer.

* **Sign-in** (:func:`sign_in`): a page of its own at ``/_ofc/sign-in``, outside Streamlit. The
  address a visitor asked for comes along as ``next`` and is where a successful sign-in goes
  (a deep link survives it). A sign-in is a signed cookie that ends after ``--sign-in-hours``
  (a reload or a new tab stays signed in); ``/_ofc/sign-out`` revokes it.
* **The token link** (``?token=`` on any address) signs in once: the token is spent, and the
  answer is a redirect to the same address without it, so it stays neither in the address bar
  nor in the tab's history.
* **Attempts** pass one limiter for the whole server (:class:`pipeline.read.access.AttemptLimiter`):
  one a second, a growing wait after failures, refused early ones cost no password hash.
* **Uploads** are bounded per browser session and in total (:data:`MAX_UPLOADS_PER_SESSION`,
  :data:`MAX_UPLOAD_BYTES_HELD`), each file by ``server.maxUploadSize``.
"""

from __future__ import annotations

import asyncio
import html
import time
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode

import streamlit as st
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from pipeline.read import access

SIGN_IN_PATH = access.SIGN_IN_PATH
SIGN_OUT_PATH = access.SIGN_OUT_PATH
OPEN_PATHS = frozenset((SIGN_IN_PATH, "/_stcore/health", "/favicon.ico"))
"""Paths that answer before signing in (the health check says only "ok")."""

UPLOAD_PREFIX = "/_stcore/upload_file/"
MAX_UPLOADS_PER_SESSION = 20
"""Most uploaded files one browser session may hold at once (the Data page ingests them)."""
MAX_UPLOAD_BYTES_HELD = 512 << 20
"""Most bytes of uploads the server holds at once, for all sessions together (512 MiB)."""
MAX_SIGN_IN_BODY = 4096
"""Longest sign-in form accepted, in bytes."""

_STREAMLIT_PREFIXES = ("/_stcore/", "/static/", "/media/", "/component/", "/app/static/")


def _now() -> float:
    return time.time()


def safe_next(target: str | None) -> str:
    """Where to go after signing in: a path of this server (never another site), else ``/``."""
    if (not target or not target.startswith("/") or target.startswith("//")
            or "\\" in target or any(ord(character) < 32 for character in target)):
        return "/"
    return target


def _target_of(scope: dict[str, Any], drop: str | None = None) -> str:
    """The path and query a request asked for (without the query parameter ``drop``)."""
    path = scope.get("path") or "/"
    pairs = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
    if drop is not None:
        pairs = [(key, value) for key, value in pairs if key != drop]
    return quote(path) + (f"?{urlencode(pairs)}" if pairs else "")


def _cookie_of(scope: dict[str, Any]) -> str | None:
    for name, value in scope.get("headers", ()):
        if name == b"cookie":
            jar: SimpleCookie = SimpleCookie()
            try:
                jar.load(value.decode("latin-1"))
            except Exception:  # noqa: BLE001 - a malformed cookie header is no sign-in
                return None
            morsel = jar.get(access.SIGN_IN_COOKIE)
            if morsel is not None:
                return morsel.value
    return None


def _set_sign_in(response: Response, value: str, seconds: float) -> None:
    response.set_cookie(access.SIGN_IN_COOKIE, value, max_age=int(seconds), path="/",
                        httponly=True, samesite="lax")


def sign_in_page(message: str = "", next_path: str = "/", status: int = 200,
                 headers: dict[str, str] | None = None) -> HTMLResponse:
    """The sign-in form: one field, the address to go to afterwards, a message."""
    token_mode = access.server_access().token
    label = "Access token" if token_mode else "Password"
    hint = ("Use the link <code>ofc dashboard</code> printed, or type its token (it signs in "
            "once; a signed-in browser can make a link for another device)." if token_mode
            else "Type the dashboard's password.")
    note = f'<p class="message" role="alert">{html.escape(message)}</p>' if message else ""
    page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign in · OFC analytics</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body {{ font-family: system-ui, sans-serif; max-width: 26rem; margin: 12vh auto; padding: 0 1rem;
       color: #262730; }}
h1 {{ font-size: 1.6rem; }} label {{ display: block; margin: 1rem 0 .3rem; font-weight: 600; }}
input[type=password] {{ width: 100%; padding: .55rem; font-size: 1rem; box-sizing: border-box; }}
button {{ margin-top: 1rem; padding: .55rem 1.2rem; font-size: 1rem; background: #ff4b4b;
         color: white; border: 0; border-radius: .4rem; }}
.message {{ background: #fdecea; padding: .6rem .8rem; border-radius: .4rem; }}
.hint {{ color: #555; font-size: .9rem; }}
</style></head>
<body><main>
<h1>OFC analytics</h1>
{note}
<form method="post" action="{SIGN_IN_PATH}">
<input type="hidden" name="next" value="{html.escape(next_path)}">
<label for="secret">{label}</label>
<input id="secret" name="secret" type="password" autocomplete="current-password" autofocus required>
<button type="submit">Sign in</button>
</form>
<p class="hint">{hint}</p>
</main></body></html>"""
    return HTMLResponse(page, status_code=status, headers=headers,
                        media_type="text/html; charset=utf-8")


async def _attempt(secret: str, state: access.ServerAccess) -> tuple[bool, float]:
    """Check one attempt through the server's one limiter: (signed in, seconds to wait when
    refused early)."""
    now = _now()
    with state.lock:
        wait = state.limiter.admit(now)
    if wait > 0:
        return False, wait
    accepted = await asyncio.to_thread(state.check, secret, now)
    with state.lock:
        if accepted:
            state.limiter.succeeded()
        else:
            state.limiter.failed(_now())
    return accepted, 0.0


def _too_many(wait: float, next_path: str) -> HTMLResponse:
    seconds = max(1, int(wait + 0.999))
    return sign_in_page(f"Too many sign-in attempts: try again in {seconds} s.", next_path,
                        status=429, headers={"Retry-After": str(seconds)})


async def sign_in(request: Request) -> Response:
    """``GET``: the form (``next``: where to go afterwards). ``POST``: check the secret; signed
    in, go to ``next`` with the sign-in cookie."""
    state = access.server_access()
    if request.method != "POST":
        next_path = safe_next(request.query_params.get("next"))
        message = {"signed-out": "You are signed out.",
                   "expired": "Your sign-in has ended: sign in again.",
                   "used": "That sign-in link has been used or is not valid.",
                   }.get(request.query_params.get("why", ""), "")
        if state.secret is None:
            return RedirectResponse(next_path, status_code=303)
        return sign_in_page(message, next_path)
    length = int(request.headers.get("content-length") or 0)
    if length > MAX_SIGN_IN_BODY:
        return sign_in_page("That form is too long.", "/", status=413)
    form = await request.form(max_files=0, max_fields=4)
    next_path = safe_next(str(form.get("next") or "/"))
    secret = str(form.get("secret") or "")
    if state.secret is None:
        return RedirectResponse(next_path, status_code=303)
    accepted, wait = await _attempt(secret, state)
    if wait:
        return _too_many(wait, next_path)
    if not accepted:
        wrong = ("Wrong token, or it has been used already." if state.token
                 else "Wrong password.")
        return sign_in_page(wrong, next_path, status=401)
    return _signed_in(next_path, state)


def _signed_in(next_path: str, state: access.ServerAccess) -> Response:
    value, _ = state.sign_ins.issue(_now(), state.sign_in_seconds)
    response = RedirectResponse(next_path, status_code=303)
    _set_sign_in(response, value, state.sign_in_seconds)
    response.headers["Cache-Control"] = "no-store"
    return response


async def sign_out(request: Request) -> Response:
    """Revoke this browser's sign-in and forget its cookie; back to the sign-in page."""
    state = access.server_access()
    sign_in_now = state.sign_ins.verify(request.cookies.get(access.SIGN_IN_COOKIE), _now())
    if sign_in_now is not None:
        state.sign_ins.revoke(sign_in_now, _now())
    response = RedirectResponse(f"{SIGN_IN_PATH}?why=signed-out", status_code=303)
    response.delete_cookie(access.SIGN_IN_COOKIE, path="/", httponly=True, samesite="lax")
    return response


class AccessGuard:
    """ASGI middleware: every request and websocket passes here first (see the module)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        path = scope.get("path") or "/"
        state = access.server_access()
        if state.secret is not None and path not in OPEN_PATHS and path != SIGN_OUT_PATH:
            query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
            signed_in = state.sign_ins.verify(_cookie_of(scope), _now()) is not None
            if kind == "http" and scope.get("method") in ("GET", "HEAD") and "token" in query:
                if signed_in:  # signed in already: the token is not tried (nor spent)
                    await RedirectResponse(safe_next(_target_of(scope, drop="token")),
                                           status_code=303)(scope, receive, send)
                else:
                    await self._token_link(scope, receive, send, query["token"], state)
                return
            if not signed_in:
                await self._refuse(scope, receive, send)
                return
        if kind == "http" and scope.get("method") == "PUT" and path.startswith(UPLOAD_PREFIX):
            refusal = _upload_refusal_now(scope)
            if refusal is not None:
                await Response(refusal, status_code=413, media_type="text/plain")(
                    scope, receive, send)
                return
        await self.app(scope, receive, send)

    async def _token_link(self, scope: dict[str, Any], receive: Any, send: Any, token: str,
                          state: access.ServerAccess) -> None:
        """``?token=``: sign in once, then the same address without it (a redirect, so the
        token stays out of the history); a spent or wrong token goes to the sign-in page."""
        target = safe_next(_target_of(scope, drop="token"))
        accepted, wait = await _attempt(token, state)
        if wait:
            response: Response = _too_many(wait, target)
        elif accepted:
            response = _signed_in(target, state)
        else:
            response = RedirectResponse(f"{SIGN_IN_PATH}?why=used&next={quote(target)}",
                                        status_code=303)
        response.headers["Referrer-Policy"] = "no-referrer"
        await response(scope, receive, send)

    async def _refuse(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Not signed in: a page asked for goes to the sign-in page (keeping where it was
        going); anything else (the websocket, uploads, Streamlit's own paths) is refused."""
        path = scope.get("path") or "/"
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        if scope.get("method") in ("GET", "HEAD") and not path.startswith(_STREAMLIT_PREFIXES):
            had_cookie = _cookie_of(scope) is not None
            why = "&why=expired" if had_cookie else ""
            response: Response = RedirectResponse(
                f"{SIGN_IN_PATH}?next={quote(_target_of(scope))}{why}", status_code=303)
        else:
            response = Response("Sign in first.", status_code=403, media_type="text/plain")
        await response(scope, receive, send)


def _upload_refusal_now(scope: dict[str, Any]) -> str | None:
    """:func:`upload_refusal` against this server's uploaded files."""
    from streamlit.runtime import Runtime

    try:
        manager = Runtime.instance().uploaded_file_mgr
    except RuntimeError:  # pragma: no cover - the runtime starts before any request
        return None
    return upload_refusal(scope, manager)


def upload_refusal(scope: dict[str, Any], manager: Any) -> str | None:
    """Why an upload (a ``PUT`` to ``/_stcore/upload_file/<session>/<file>``) must be refused,
    given Streamlit's uploaded-file manager: its session holds :data:`MAX_UPLOADS_PER_SESSION`
    files already, or the server would hold more than :data:`MAX_UPLOAD_BYTES_HELD`; else
    None."""
    parts = (scope.get("path") or "")[len(UPLOAD_PREFIX):].split("/")
    session_id = parts[0] if parts else ""
    held = getattr(manager, "file_storage", {}).get(session_id, {})
    if len(held) >= MAX_UPLOADS_PER_SESSION:
        return (f"Too many files: a session may hold {MAX_UPLOADS_PER_SESSION} uploads at "
                "once; ingest or remove some first.")
    stats = manager.get_stats()
    held_bytes = sum(stat.byte_length for family in stats.values() for stat in family)
    length = 0
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                length = int(value)
            except ValueError:
                length = 0
    if held_bytes + length > MAX_UPLOAD_BYTES_HELD:
        return (f"The server holds {held_bytes >> 20} MiB of uploads already (at most "
                f"{MAX_UPLOAD_BYTES_HELD >> 20} MiB): try again once they are ingested.")
    return None


app = st.App(
    str(Path(__file__).with_name("app.py")),
    routes=[Route(SIGN_IN_PATH, sign_in, methods=["GET", "POST"]),
            Route(SIGN_OUT_PATH, sign_out, methods=["GET", "POST"])],
    middleware=[Middleware(AccessGuard)],
)
