"""The HTTP face of the fake: Slack's Web API under /api/ and response_urls under /response/.

Only decoding requests and encoding answers lives here; WebApi decides what
they mean.
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, cast
from urllib.parse import parse_qsl, urlsplit

from slackapp.fakeslack.models import JSON
from slackapp.fakeslack.webapi import ApiAnswer, ApiRequest, WebApi, response_text
from slackapp.serving import ServerThread


class SlackHttpServer:
    """A threaded HTTP server on a free local port, serving one WebApi."""

    def __init__(self, api: WebApi, host: str = "127.0.0.1", port: int = 0) -> None:
        self._httpd = SlackServer((host, port), _Handler, api)
        self._thread = ServerThread(
            functools.partial(self._httpd.serve_forever, poll_interval=0.05),
            self._httpd.shutdown,
            "fakeslack-http",
        )

    @property
    def base_url(self) -> str:
        """``http://host:port`` with no trailing slash."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def api_url(self) -> str:
        """What to give slack_sdk as ``base_url`` (it appends the method name)."""
        return f"{self.base_url}/api/"

    def start(self) -> None:
        """Serve in a daemon thread until stop()."""
        self._thread.start()

    def stop(self) -> None:
        """Stop serving and free the port."""
        self._thread.stop()
        self._httpd.server_close()


class SlackServer(ThreadingHTTPServer):
    daemon_threads = True
    # Python's default backlog is 5: more connections at once than that and the kernel drops
    # the rest, which each try again a second later. Slack takes many connections at once.
    request_queue_size = 1024

    def __init__(self, address: tuple[str, int], handler: type[_Handler], api: WebApi) -> None:
        super().__init__(address, handler)
        self.api = api


class _Handler(BaseHTTPRequestHandler):
    # Slack accepts GET and POST for every method; so does the fake.
    def do_GET(self) -> None:
        self._route()

    def do_POST(self) -> None:
        self._route()

    def log_message(self, format: str, *args: Any) -> None:
        """Stay quiet: the call log is the record of what happened."""

    def _route(self) -> None:
        api = cast(SlackServer, self.server).api
        url = urlsplit(self.path)
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if url.path.startswith("/api/"):
            answer = api.handle(self._api_request(url.path[len("/api/") :], url.query, body))
            if answer.hang_up:
                self.close_connection = True
                return
            self._send_json(answer)
        elif url.path.startswith("/response/"):
            answer = api.respond_to(url.path[len("/response/") :], _json_object(body))
            if answer.hang_up:
                self.close_connection = True
                return
            text = response_text(answer).encode()
            self._send(answer.status, text, "text/plain; charset=utf-8", answer.headers)
        else:
            self._send(404, b"not found", "text/plain; charset=utf-8")

    def _api_request(self, method: str, query: str, body: bytes) -> ApiRequest:
        params = request_params(self.headers.get("Content-Type", ""), body, query)
        token = params.pop("token", None)
        client_auth = None
        scheme, _, credentials = self.headers.get("Authorization", "").partition(" ")
        if scheme.lower() == "bearer":
            token = credentials.strip()
        elif scheme.lower() == "basic":
            client_auth = _basic_credentials(credentials)
        return ApiRequest(method, params, token, client_auth)

    def _send_json(self, answer: ApiAnswer) -> None:
        body = json.dumps(answer.body).encode()
        self._send(answer.status, body, "application/json; charset=utf-8", answer.headers)

    def _send(
        self,
        status: int,
        body: bytes,
        content_type: str,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)


def request_params(content_type: str, body: bytes, query: str = "") -> JSON:
    """The arguments of a Web API call sent as JSON, a form, multipart or a query string."""
    params: JSON = dict(parse_qsl(query, keep_blank_values=True))
    kind = content_type.split(";")[0].strip().lower()
    if kind == "application/json":
        params.update(_json_object(body))
    elif kind == "multipart/form-data":
        params.update(_multipart_fields(content_type, body))
    elif body:
        params.update(parse_qsl(body.decode(), keep_blank_values=True))
    return params


def _json_object(body: bytes) -> JSON:
    try:
        decoded = json.loads(body or b"{}")
    except json.JSONDecodeError:
        return {}
    return decoded if isinstance(decoded, dict) else {}


def _multipart_fields(content_type: str, body: bytes) -> dict[str, str]:
    # slack_sdk switches to multipart when a call carries files.
    envelope = f"Content-Type: {content_type}\r\n\r\n".encode() + body
    parsed = BytesParser(policy=HTTP).parsebytes(envelope)
    fields: dict[str, str] = {}
    for part in parsed.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True)
        if isinstance(name, str) and isinstance(payload, bytes):
            fields[name] = payload.decode(errors="replace")
    return fields


def _basic_credentials(encoded: str) -> tuple[str, str] | None:
    try:
        client_id, _, secret = base64.b64decode(encoded.strip()).decode().partition(":")
    except (binascii.Error, UnicodeDecodeError):
        return None
    return client_id, secret
