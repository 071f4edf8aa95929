"""Headers every answer of the gateway carries, whatever produced it: `X-Content-Type-Options:
nosniff` (a browser never guesses a JSON answer to be HTML) and a Content-Security-Policy. An answer
that sets its own policy keeps it (the web app's pages, /docs); every other answer (JSON, problem
details, Markdown, the event stream) gets one that allows nothing, so a document opened in a browser
can run no script and load nothing, and no page may frame it."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

NOSNIFF = (b"x-content-type-options", b"nosniff")
NOTHING = (b"content-security-policy", b"default-src 'none'; frame-ancestors 'none'; base-uri 'none'")


class SecurityHeaders:
    """ASGI middleware adding the module's headers at the start of every HTTP answer."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", ()))
                names = {name.lower() for name, _ in headers}
                if NOSNIFF[0] not in names:
                    headers.append(NOSNIFF)
                if NOTHING[0] not in names:
                    headers.append(NOTHING)
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, sending)


__all__ = ["SecurityHeaders"]
