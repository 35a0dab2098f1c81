"""A stand-in for the Anthropic Messages API, so that real Claude Code can
be driven offline: asked with the MCP tool `mcp__warden__echo` among its
tools, it answers with a call to it; given the tool's result, it answers
with that result as text (`RESULT:<content>`); anything else gets "ok".
Streaming and plain answers both. Logs each request's tools to LOG.

    claude_api.py PORT LOG
"""

import json, sys, http.server, threading
LOG = open(sys.argv[2], "a")
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
        msgs = body.get("messages", [])
        tools = [t.get("name") for t in body.get("tools", [])]
        LOG.write(json.dumps({"path": self.path, "tools": tools, "n": len(msgs)}) + "\n"); LOG.flush()
        last = msgs[-1] if msgs else {}
        content = last.get("content")
        tool_result = None
        if isinstance(content, list):
            for block in content:
                if block.get("type") == "tool_result":
                    tool_result = block
        want = "mcp__warden__echo" in tools
        if tool_result is not None:
            text = "RESULT:" + json.dumps(tool_result.get("content"))
            blocks = [("text", text)]
            stop = "end_turn"
        elif want:
            blocks = [("tool", {"id": "toolu_01", "name": "mcp__warden__echo", "input": {"text": "hi from claude"}})]
            stop = "tool_use"
        else:
            blocks = [("text", "ok")]
            stop = "end_turn"
        if not body.get("stream"):
            out = {"id": "msg_1", "type": "message", "role": "assistant", "model": body.get("model", "m"), "content": [], "stop_reason": stop, "usage": {"input_tokens": 1, "output_tokens": 1}}
            for kind, value in blocks:
                out["content"].append({"type": "text", "text": value} if kind == "text" else {"type": "tool_use", **value})
            data = json.dumps(out).encode()
            self.send_response(200); self.send_header("content-type", "application/json"); self.send_header("content-length", str(len(data))); self.end_headers(); self.wfile.write(data); return
        self.send_response(200); self.send_header("content-type", "text/event-stream"); self.end_headers()
        def ev(name, obj): self.wfile.write(f"event: {name}\ndata: {json.dumps(obj)}\n\n".encode()); self.wfile.flush()
        ev("message_start", {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": body.get("model", "m"), "content": [], "stop_reason": None, "usage": {"input_tokens": 1, "output_tokens": 1}}})
        for i, (kind, value) in enumerate(blocks):
            if kind == "text":
                ev("content_block_start", {"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}})
                ev("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": value}})
            else:
                ev("content_block_start", {"type": "content_block_start", "index": i, "content_block": {"type": "tool_use", "id": value["id"], "name": value["name"], "input": {}}})
                ev("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": json.dumps(value["input"])}})
            ev("content_block_stop", {"type": "content_block_stop", "index": i})
        ev("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 1}})
        ev("message_stop", {"type": "message_stop"})
    def do_GET(self):
        self.send_response(404); self.end_headers()
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
