#!/usr/bin/env python3
"""Writes fuzz/seeds/<target>/ from the string literals of the tests.

Run from the repository root: python3 fuzz/tools/seeds.py. The seeds are
small and committed; the corpora the fuzzers grow from them are not.
"""
import hashlib, glob, os, re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RAW = re.compile(r'r(#+)"(.*?)"\1', re.S)
PLAIN = re.compile(r'(?<![r#\w])"((?:[^"\\\n]|\\.)*)"')

def unescape(s):
    out, i = [], 0
    while i < len(s):
        c = s[i]
        if c == '\\' and i + 1 < len(s):
            n = s[i + 1]
            simple = {'n': '\n', 't': '\t', 'r': '\r', '0': '\0', '\\': '\\', '"': '"', "'": "'"}
            if n in simple:
                out.append(simple[n]); i += 2; continue
            if n == 'u' and s[i + 2:i + 3] == '{':
                end = s.index('}', i)
                out.append(chr(int(s[i + 3:end], 16))); i = end + 1; continue
            if n == 'x':
                out.append(chr(int(s[i + 2:i + 4], 16))); i += 4; continue
            if n == '\n':
                i += 2
                while i < len(s) and s[i] in ' \t': i += 1
                continue
        out.append(c); i += 1
    return ''.join(out)

def literals(patterns):
    found = []
    for pattern in patterns:
        for path in sorted(p for p in glob.glob(os.path.join(ROOT, pattern), recursive=True) if os.path.isfile(p)):
            text = open(path, encoding='utf-8', errors='replace').read()
            found += [m.group(2) for m in RAW.finditer(text)]
            for m in PLAIN.finditer(text):
                try:
                    found.append(unescape(m.group(1)))
                except (ValueError, IndexError):
                    pass
    return found

def write(target, items, limit=80, max_len=4096):
    directory = os.path.join(ROOT, 'fuzz', 'seeds', target)
    os.makedirs(directory, exist_ok=True)
    seen = set()
    for item in items:
        data = item.encode('utf-8') if isinstance(item, str) else item
        if not data or len(data) > max_len or data in seen:
            continue
        seen.add(data)
        if len(seen) > limit:
            break
        name = hashlib.sha1(data).hexdigest()[:12]
        with open(os.path.join(directory, name), 'wb') as f:
            f.write(data)

frames = [s for s in literals(['crates/jsonrpc/src/*.rs', 'crates/gateway/src/**/*.rs', 'crates/upstream/src/**/*.rs'])
          if s.lstrip().startswith(('{', '['))]
write('jsonrpc_frame', frames, limit=120)
write('jsonrpc_members', frames, limit=80)
write('jsonrpc_lines', [b'\x05short\r\n\n0123456789abc\nnext\n\xff\xfe\nlast'] +
      [b'\x20' + f.encode() + b'\r\n' + f.encode() for f in frames[:20]])
modern = [s for s in literals(['crates/gateway/src/modern/*.rs', 'crates/gateway/src/front/http/*.rs',
                               'crates/warden/tests/modern_*.rs', 'crates/upstream/src/mirror.rs'])
          if s.lstrip().startswith('{') and ('io.modelcontextprotocol' in s or 'x-mcp-header' in s)]
modern += ['{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}\0{"region":"us-west1"}']
META = '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":%s,"io.modelcontextprotocol/logLevel":"info","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}}'
for caps in ['{}', '{"elicitation":{}}', '{"elicitation":{"url":{},"form":{}},"sampling":{},"roots":null}', '{"elicitation":null}']:
    modern.append('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"x":1},%s}}' % (META % caps))
    modern.append('{"jsonrpc":"2.0","id":"r","method":"tools/call","params":{"name":"t","requestState":"w1.a.b","inputResponses":{"a":{"action":"accept"}},%s}}' % (META % caps))
modern.append('{"jsonrpc":"2.0","id":2,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01"}}}')
write('modern_envelope', modern)
write('request_state', ['w1.eyJsIjoiYSJ9.AAAA', 'lane\0exchange\0request\0{"b":1,"a":[1.5,"x"]}', 'w1..', ''])
configs = [s for s in literals(['crates/config/src/*.rs', 'crates/config/tests/*.rs', 'crates/policy/tests/*.rs',
                                'crates/policy/src/*.rs', 'crates/sandbox/src/**/*.rs'])
           if re.search(r'^\s*(servers|policy|profiles|sandbox|http|auth|approval|audit|limits):', s, re.M)]
configs += [open(p).read() for p in sorted(glob.glob(os.path.join(ROOT, 'examples', '*.yaml')))]
write('config_yaml', configs)
policies = [s for s in configs if 'policy:' in s]
args = ['{"cmd": "rm -rf /"}', '{"amount": 500}', '{"sql": "SELECT * FROM users"}', '{"path": "/tmp/../etc/passwd"}',
        '{"url": "http://127.0.0.1:8080/x"}', '{"paths": ["a", "~/b"]}', 'not json', '']
write('policy_eval', [p + '\0db\0query\0' + args[i % len(args)] for i, p in enumerate(policies)] +
      [p + '\0shell\0run\0' + a for p in policies[:3] for a in args])
sql = [s for s in literals(['crates/sql/tests/*.rs', 'crates/sql/src/*.rs', 'crates/policy/tests/sql.rs'])
       if re.match(r'\s*(select|insert|update|delete|drop|create|with|alter|grant|copy|pragma|attach|set|begin|explain|merge|truncate|call|exec)\b', s, re.I)]
write('sql_analyze', ['\0' + s if i % 2 == 0 else '\1' + s for i, s in enumerate(sql)], limit=120)
urls = [s for s in literals(['crates/policy/src/domains.rs', 'crates/policy/tests/domains.rs', 'crates/import/src/ironcurtain*.rs'])
        if re.search(r'://|@|^//', s) or re.match(r'^[\w.-]+:[\w/]', s)]
write('url_host', urls)
paths = [s for s in literals(['crates/policy/src/paths.rs', 'crates/policy/tests/paths.rs', 'crates/policy/tests/per_path.rs'])
         if s.startswith(('/', '~', '.', 'a/')) or '/..' in s]
write('policy_paths', paths + ['a/../b', '~/x/../../y', './.', '../..', 'x//y/./z'])
regexes = []
for s in literals(['crates/import/src/pyregex.rs', 'crates/import/tests/sentinel.rs', 'crates/import/tests/data/**/*']):
    if any(c in s for c in '\\^$*+?()[]{}|') and len(s) < 200:
        regexes.append(s)
write('pyregex', regexes + ['SELECT', 'drop table'], limit=120)
heads = [s for s in literals(['crates/sandbox/src/proxy/*.rs', 'crates/sandbox/tests/*.rs', 'crates/warden/tests/sandbox*.rs'])
         if re.match(r'^(CONNECT|GET|POST|PUT|HEAD) ', s)]
heads += ['api.github.com:443,*.example.com,10.0.0.1,[::1]:8080\nevil.test\npub.test=192.0.2.1']
write('egress_request', heads)
write('http_headers', ['localhost:8210', '127.0.0.1', '[::1]:80', 'LOCALHOST', 'a.localhost.', '127.1',
                       'example.com:80', 'secret\0secret', 'http://localhost:1', '[::ffff:127.0.0.1]'])
