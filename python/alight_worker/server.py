"""An OpenAI-compatible HTTP server over a backend's `generate`, in vLLM's format where alight depends on it:
`return_token_ids` → `prompt_token_ids` and `token_ids`, logprobs in the OpenAI shapes, streaming as SSE, and the
served weights' version in the `x-alight-model-version` header."""

import json
import threading
import time
import traceback
import uuid
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from .log import log
from .stream_text import StreamText
from .tool_calls import parse_calls, request_tools, template_messages


class BadRequest(Exception):
    pass


def start_server(backend, host="127.0.0.1", port=0):
    handler = type("Handler", (Handler,), {"backend": backend})
    server = ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://{host}:{server.server_address[1]}/v1"


@dataclass(frozen=True)
class Ask:
    """One completion request as the engine answers it: what to sample, and what the answer carries."""

    body: dict
    prompt: list
    chat: bool
    max_tokens: int
    temperature: float
    top_p: float
    seed: object
    want_ids: bool
    want_logprobs: bool
    kind: str
    head: dict


def asked(body, prompt, chat, model):
    """The request's sampling settings with the OpenAI API's defaults, and its answer's id, time and model."""
    temperature = float(body["temperature"] if body.get("temperature") is not None else 1.0)
    top_p = float(body["top_p"] if body.get("top_p") is not None else 1.0)
    # vLLM's bounds: an empty nucleus has no token to draw, and a negative temperature no meaning.
    if not 0.0 < top_p <= 1.0:
        raise BadRequest(f"top_p must be in (0, 1], got {top_p}")
    if temperature < 0.0:
        raise BadRequest(f"temperature must be at least 0, got {temperature}")
    return Ask(
        body=body,
        prompt=prompt,
        chat=chat,
        max_tokens=int(body.get("max_completion_tokens") or body.get("max_tokens") or 256),
        temperature=temperature,
        top_p=top_p,
        seed=body.get("seed"),
        want_ids=bool(body.get("return_token_ids")),
        want_logprobs=bool(body.get("logprobs")) if chat else body.get("logprobs") is not None,
        kind="chat.completion" if chat else "text_completion",
        head={
            "id": f"{'chatcmpl' if chat else 'cmpl'}-{uuid.uuid4().hex}",
            "created": int(time.time()),
            "model": model,
        },
    )


class Handler(BaseHTTPRequestHandler):
    backend = None
    protocol_version = "HTTP/1.1"
    # A client that stops reading must not hold the model's lock for ever: a blocked write fails after this long.
    timeout = 120

    def log_message(self, *args):  # the gateway records every call; no access log on the worker's stderr
        pass

    def do_GET(self):
        if self.path == "/v1/models":
            return self.send_json(
                200, {"object": "list", "data": [{"id": self.backend.name, "object": "model", "owned_by": "alight"}]}
            )
        if self.path == "/health":
            return self.send_json(200, {"ok": True, "version": self.backend.version})
        self.send_json(404, {"error": {"message": f"no route {self.path}", "type": "NotFoundError"}})

    def do_POST(self):
        try:
            length = int(self.headers.get("content-length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"null")
            except json.JSONDecodeError as err:
                raise BadRequest(f"the body is not JSON: {err}")
            if not isinstance(body, dict):
                raise BadRequest("the body must be a JSON object")
            if self.path == "/v1/chat/completions":
                if not isinstance(body.get("messages"), list) or not body["messages"]:
                    raise BadRequest("messages must be a non-empty list")
                tools = request_tools(body)
                prompt = self.backend.chat_prompt(template_messages(body["messages"]), tools)
                return self.complete(body, prompt, chat=True)
            if self.path == "/v1/completions":
                raw = body.get("prompt")
                prompt = (
                    raw
                    if isinstance(raw, list) and all(isinstance(t, int) for t in raw)
                    else self.backend.text_prompt(str(raw))
                )
                return self.complete(body, prompt, chat=False)
            self.send_json(404, {"error": {"message": f"no route {self.path}", "type": "NotFoundError"}})
        except (BrokenPipeError, ConnectionResetError, TimeoutError) as err:
            # The client gave up before its answer (the gateway's timeout, a killed harness): nothing left to tell it.
            log(f"{self.path}: the client left before its answer ({type(err).__name__})")
        except (BadRequest, ValueError) as err:
            self.send_json(400, {"error": {"message": str(err), "type": "BadRequestError", "code": 400}})
        except Exception as err:  # an answer, not a dropped connection: the gateway records it
            traceback.print_exc()
            self.send_json(
                500, {"error": {"message": f"{type(err).__name__}: {err}", "type": "InternalServerError", "code": 500}}
            )

    def complete(self, body, prompt, chat):
        model = body.get("model")
        if model not in (None, self.backend.name):
            return self.send_json(
                404,
                {"error": {"message": f"The model `{model}` does not exist.", "type": "NotFoundError", "code": 404}},
            )
        if int(body.get("n") or 1) != 1:
            raise BadRequest("n > 1 is not supported")
        ask = asked(body, prompt, chat, self.backend.name)
        self.backend.check_length(len(prompt), ask.max_tokens)  # a 400 now, not an error inside a stream
        if body.get("stream"):
            return self.stream(ask)
        max_tokens, temperature, top_p, seed = ask.max_tokens, ask.temperature, ask.top_p, ask.seed
        want_ids, want_logprobs, kind, head = ask.want_ids, ask.want_logprobs, ask.kind, ask.head
        greedy_one = max_tokens == 1 and temperature == 0
        scored = None if chat else self.scored_prompt(body, prompt, greedy_next=greedy_one)
        if scored and "next" in scored:
            # A scoring request (a teacher's): its one greedy token comes from the scoring pass itself.
            (token, logprob), version = scored["next"], scored["version"]
            ids, logprobs, finish = [token], [logprob], "stop" if token in self.backend.stop_ids else "length"
        else:
            ids, logprobs, finish, version = self.backend.generate(prompt, max_tokens, temperature, top_p, seed)
        text = self.backend.decode(ids)
        choice = {"index": 0, "finish_reason": finish}
        if chat:
            choice["message"], choice["finish_reason"] = self.message(body, text, finish)
            choice["logprobs"] = (
                {"content": [self.chat_logprob(t, lp) for t, lp in zip(ids, logprobs)]} if want_logprobs else None
            )
        else:
            choice["text"] = text
            if scored:
                choice["prompt_logprobs"] = [None] + [
                    {str(t): {"logprob": lp, "rank": None, "decoded_token": self.backend.decode([t])}}
                    for t, lp in zip(prompt[1:], scored["logprobs"])
                ]
            choice["logprobs"] = (
                {"tokens": [self.backend.decode([t]) for t in ids], "token_logprobs": logprobs}
                if want_logprobs
                else None
            )
            if want_ids:
                choice["prompt_token_ids"] = prompt
        if want_ids:
            choice["token_ids"] = ids
        answer = {
            **head,
            "object": kind,
            "choices": [choice],
            "usage": {
                "prompt_tokens": len(prompt),
                "completion_tokens": len(ids),
                "total_tokens": len(prompt) + len(ids),
            },
        }
        if chat and want_ids:
            answer["prompt_token_ids"] = prompt
        self.send_json(200, answer, version)

    def message(self, body, text, finish):
        """The assistant's message and the finish reason: its text, or with tools offered, the tool calls it wrote
        (tool_calls.py), which finish as `tool_calls`."""
        content, calls = parse_calls(text) if request_tools(body) else (text, [])
        if not calls:
            return {"role": "assistant", "content": content}, finish
        return {"role": "assistant", "content": content, "tool_calls": calls}, "tool_calls"

    def scored_prompt(self, body, prompt, greedy_next):
        """vLLM's `prompt_logprobs`, if asked: each prompt token's log-probability given the ones before, under the
        weights served now (what a teacher gives for a student's tokens: on-policy distillation)."""
        if body.get("prompt_logprobs") is None:
            return None
        if body["prompt_logprobs"] != 0:
            raise BadRequest("prompt_logprobs: only 0 (each prompt token's own log-probability) is supported")
        return self.backend.score(prompt, greedy_next=greedy_next)

    def chat_logprob(self, token, logprob):
        text = self.backend.tokenizer.convert_ids_to_tokens(token)
        return {"token": text, "logprob": logprob, "bytes": list(text.encode()), "top_logprobs": []}

    def stream(self, ask):
        head, prompt, chat, body = ask.head, ask.prompt, ask.chat, ask.body
        want_ids, want_logprobs = ask.want_ids, ask.want_logprobs
        kind = f"{ask.kind}.chunk" if chat else ask.kind
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("x-alight-model-version", str(self.backend.version))
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True

        def send(obj):
            self.wfile.write(f"data: {json.dumps(obj)}\n\n".encode())
            self.wfile.flush()

        first = {
            **head,
            "object": kind,
            "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]
            if chat
            else [
                {"index": 0, "text": "", "finish_reason": None, **({"prompt_token_ids": prompt} if want_ids else {})}
            ],
        }
        if chat and want_ids:
            first["prompt_token_ids"] = prompt
        send(first)
        text = StreamText(self.backend.decode)

        # With tools offered, the text is held back: whether it is content or a tool call is known only at its end.
        hold = chat and request_tools(body) is not None

        def on_token(token, logprob):
            delta = text.push(token)
            choice = {"index": 0, "finish_reason": None}
            if chat:
                choice["delta"] = {} if hold else {"content": delta}
                choice["logprobs"] = {"content": [self.chat_logprob(token, logprob)]} if want_logprobs else None
            else:
                choice["text"] = delta
                choice["logprobs"] = (
                    {"tokens": [self.backend.decode([token])], "token_logprobs": [logprob]} if want_logprobs else None
                )
            if want_ids:
                choice["token_ids"] = [token]
            send({**head, "object": kind, "choices": [choice]})

        try:
            ids, _, finish, _ = self.backend.generate(
                prompt, ask.max_tokens, ask.temperature, ask.top_p, ask.seed, on_token
            )
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            return  # the client left; the gateway records what it got
        except Exception as err:  # after the headers, an error can only travel as an event
            traceback.print_exc()
            send({"error": {"message": f"{type(err).__name__}: {err}", "type": "InternalServerError", "code": 500}})
            return
        rest = text.rest()
        last = {
            "index": 0,
            "finish_reason": finish,
            **({"delta": {"content": rest} if rest else {}} if chat else {"text": rest}),
        }
        if hold:
            content, calls = parse_calls(self.backend.decode(ids))
            last["delta"] = {"content": content}
            if calls:
                last["delta"]["tool_calls"] = [{"index": i, **c} for i, c in enumerate(calls)]
                last["finish_reason"] = "tool_calls"
        send({**head, "object": kind, "choices": [last]})
        if (body.get("stream_options") or {}).get("include_usage"):
            send(
                {
                    **head,
                    "object": kind,
                    "choices": [],
                    "usage": {
                        "prompt_tokens": len(prompt),
                        "completion_tokens": len(ids),
                        "total_tokens": len(prompt) + len(ids),
                    },
                }
            )
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()

    def send_json(self, status, obj, version=None):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("x-alight-model-version", str(self.backend.version if version is None else version))
        self.end_headers()
        self.wfile.write(data)
