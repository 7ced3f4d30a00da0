# The HTTPS front of the fake API server: TLS per connection (in the
# connection's thread), HTTP/1.1 keep-alive, bearer-token auth, discovery,
# OpenAPI v3, routing of /api and /apis paths to kube_api.Api, chunked
# watches, pods/log (also followed), Table output, throttling injection, and
# one request-log line per request on stderr.
import hashlib
import http.server
import json
import queue
import socket
import socketserver
import ssl
import sys
import threading
import time
import traceback
import uuid
from urllib.parse import parse_qs, unquote, urlsplit

import kube_schema
from kube_api import selectors
from kube_store import CUT
from kube_util import RESOURCES, ApiError, bad_request, dumpb, method_not_allowed, truthy

try:
    import kube_tables
except ImportError:  # optional
    kube_tables = None

SERVER_VERSION = {'major': '1', 'minor': '32', 'gitVersion': 'v1.32.4',
                  'gitCommit': '59526cd4867447956156ae3a602fcbac10a2c335', 'gitTreeState': 'clean',
                  'buildDate': '2025-04-22T16:00:00Z', 'goVersion': 'go1.23.8', 'compiler': 'gc',
                  'platform': 'linux/amd64'}
OPEN_PATHS = ('/readyz', '/livez', '/healthz', '/version')
NOT_FOUND = ApiError(404, 'NotFound', 'the server could not find the requested resource', {})


def resource_list(group):
    out = []
    for r in RESOURCES.values():
        if r.group != group:
            continue
        e = {'name': r.name, 'singularName': r.singular, 'namespaced': r.namespaced, 'kind': r.kind,
             'verbs': r.verbs}
        if r.short:
            e['shortNames'] = r.short
        if r.name in ('pods', 'jobs', 'services'):
            e['categories'] = ['all']
        e['storageVersionHash'] = hashlib.sha256(r.qualified.encode()).digest()[:8].hex()
        out.append(e)
        for sub in r.subresources:
            s = {'name': '%s/%s' % (r.name, sub), 'singularName': '', 'namespaced': r.namespaced, 'kind': r.kind,
                 'verbs': ['get', 'patch', 'update']}
            if sub == 'log':
                s['verbs'] = ['get']
            elif sub == 'eviction':
                s.update(group='policy', version='v1', kind='Eviction', verbs=['create'])
            out.append(s)
    return {'kind': 'APIResourceList', 'apiVersion': 'v1', 'groupVersion': (group + '/v1') if group else 'v1',
            'resources': out}


def openapi_docs():
    """{'api/v1': bytes, 'apis/batch/v1': bytes} and the root document."""
    docs = {}
    for group, key in (('', 'api/v1'), ('batch', 'apis/batch/v1')):
        res = [(r.name, r.kind, r.namespaced, r.verbs) for r in RESOURCES.values() if r.group == group]
        docs[key] = dumpb(kube_schema.gv_document(group, 'v1', res, SERVER_VERSION['gitVersion']))
    root = {'paths': {k: {'serverRelativeURL': '/openapi/v3/%s?hash=%s' % (
        k, hashlib.sha512(v).hexdigest().upper()[:128])} for k, v in docs.items()}}
    return docs, dumpb(root)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256

    def __init__(self, addr, api, ctx, token, cfg):
        self.api, self.ssl_ctx, self.token, self.cfg = api, ctx, token, cfg
        self.throttle_lock = threading.Lock()
        self.throttle = [0, 1]
        self.openapi, self.openapi_root = openapi_docs()
        self.discovery = {'': dumpb(resource_list('')), 'batch': dumpb(resource_list('batch'))}
        self.bookmark_seconds = float(cfg.get('bookmark_seconds', 10))
        super().__init__(addr, Handler)

    def handle_error(self, request, client_address):
        e = sys.exc_info()[1]
        if isinstance(e, (ssl.SSLError, ConnectionError, socket.timeout, OSError)):
            return
        super().handle_error(request, client_address)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'
    timeout = 600
    # TCP_NODELAY, as Go's net/http (the real API server) sets it: headers
    # and body leave as separate writes, and with Nagle on, a client's
    # delayed ACK would hold every answer back ~40 ms.
    disable_nagle_algorithm = True

    def setup(self):
        self.request.settimeout(30)
        self.request = self.server.ssl_ctx.wrap_socket(self.request, server_side=True)
        self.request.settimeout(None)
        super().setup()

    def log_request(self, code='-', size='-'):
        pass

    def log_message(self, fmt, *args):
        pass

    def send_response(self, code, message=None):
        self.send_response_only(code, message)
        self.send_header('Date', self.date_time_string())
        self.status_code = code

    # --------------------------------------------------------- plumbing
    def read_body(self):
        if self.headers.get('Transfer-Encoding', '').lower() == 'chunked':
            out = b''
            while True:
                size = int(self.rfile.readline().split(b';')[0].strip() or b'0', 16)
                if size == 0:
                    while self.rfile.readline() not in (b'\r\n', b'\n', b''):
                        pass
                    return out
                out += self.rfile.read(size)
                self.rfile.readline()
        n = int(self.headers.get('Content-Length') or 0)
        return self.rfile.read(n) if n > 0 else b''

    def common_headers(self):
        self.send_header('Audit-Id', str(uuid.uuid4()))
        self.send_header('Cache-Control', 'no-cache, private')

    def send_body(self, code, body, ctype='application/json', headers=None):
        self.send_response(code)
        self.common_headers()
        self.send_header('Content-Type', ctype)
        for k, v in (headers or {}).items():
            for one in (v if isinstance(v, list) else [v]):
                self.send_header(k, one)
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        if self.command != 'HEAD':
            self.wfile.write(body)

    def start_chunked(self, ctype='application/json'):
        self.send_response(200)
        self.common_headers()
        self.send_header('Content-Type', ctype)
        self.send_header('Transfer-Encoding', 'chunked')
        self.end_headers()

    def chunk(self, data):
        if data:
            self.wfile.write(b'%x\r\n%s\r\n' % (len(data), data))

    def end_chunked(self):
        self.wfile.write(b'0\r\n\r\n')

    def do_GET(self):
        self.dispatch()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = do_GET

    # --------------------------------------------------------- dispatch
    def dispatch(self):
        t0 = time.monotonic()
        self.status_code = 0
        try:
            body = self.read_body()
        except (ValueError, OSError):
            self.close_connection = True
            return
        url = urlsplit(self.path)
        path = unquote(url.path).rstrip('/') or '/'
        params = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        self.params = params
        try:
            self.route(path, params, body)
        except ApiError as e:
            self.send_body(e.code, dumpb(e.status()), headers=e.headers)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
            self.close_connection = True
        except Exception:  # noqa: BLE001
            traceback.print_exc()
            try:
                self.send_body(500, dumpb(ApiError(500, 'InternalError', 'Internal error occurred: %s'
                                                   % sys.exc_info()[1]).status()))
            except OSError:
                self.close_connection = True
        sys.stderr.write('%s %s %s %d %.1fms\n' % (time.strftime('%H:%M:%S'), self.command, self.path,
                                                   self.status_code, (time.monotonic() - t0) * 1000))

    def authorized(self):
        auth = self.headers.get('Authorization', '')
        return auth == 'Bearer ' + self.server.token

    def route(self, path, params, body):
        m = self.command
        if path in ('/readyz', '/livez', '/healthz'):
            return self.send_body(200, b'ok', 'text/plain; charset=utf-8')
        if path == '/version':
            return self.send_body(200, json.dumps(SERVER_VERSION, indent=2).encode())
        if not self.authorized():
            raise ApiError(401, 'Unauthorized', 'Unauthorized')
        if path.startswith('/_fake/'):
            return self.fake(path[len('/_fake/'):], body)
        with self.server.throttle_lock:
            if self.server.throttle[0] > 0:
                self.server.throttle[0] -= 1
                ra = self.server.throttle[1]
                raise ApiError(429, 'TooManyRequests', 'Too many requests, please try again later.',
                               {'retryAfterSeconds': ra}, {'Retry-After': str(ra)})
        parts = path.strip('/').split('/')
        if m == 'GET':
            if path == '/api':
                return self.send_body(200, dumpb({'kind': 'APIVersions', 'versions': ['v1'],
                                                  'serverAddressByClientCIDRs': [{'clientCIDR': '0.0.0.0/0',
                                                   'serverAddress': '127.0.0.1:%s' % self.server.cfg['port']}]}))
            if path == '/apis':
                gv = {'groupVersion': 'batch/v1', 'version': 'v1'}
                return self.send_body(200, dumpb({'kind': 'APIGroupList', 'apiVersion': 'v1', 'groups': [
                    {'name': 'batch', 'versions': [gv], 'preferredVersion': gv}]}))
            if path == '/apis/batch':
                gv = {'groupVersion': 'batch/v1', 'version': 'v1'}
                return self.send_body(200, dumpb({'kind': 'APIGroup', 'apiVersion': 'v1', 'name': 'batch',
                                                  'versions': [gv], 'preferredVersion': gv}))
            if path == '/api/v1':
                return self.send_body(200, self.server.discovery[''])
            if path == '/apis/batch/v1':
                return self.send_body(200, self.server.discovery['batch'])
            if path == '/openapi/v3':
                return self.send_body(200, self.server.openapi_root)
            if path.startswith('/openapi/v3/'):
                doc = self.server.openapi.get(path[len('/openapi/v3/'):])
                if doc is None:
                    raise NOT_FOUND
                return self.send_body(200, doc, headers={'Cache-Control': 'public, immutable'} if 'hash' in params
                                      else None)
        if parts[0] == 'api' and len(parts) >= 3 and parts[1] == 'v1':
            rest, group = parts[2:], ''
        elif parts[0] == 'apis' and len(parts) >= 4 and parts[1] == 'batch' and parts[2] == 'v1':
            rest, group = parts[3:], 'batch'
        else:
            raise NOT_FOUND
        ns = None
        if len(rest) >= 3 and rest[0] == 'namespaces':
            ns, rest = rest[1], rest[2:]
        res, name, sub = rest[0], rest[1] if len(rest) > 1 else None, rest[2] if len(rest) > 2 else None
        r = RESOURCES.get(res)
        if r is None or r.group != group or len(rest) > 3 or (ns is not None and not r.namespaced) or \
                (sub is not None and sub not in r.subresources):
            raise NOT_FOUND
        return self.verb(r, ns, name, sub, params, body)

    def verb(self, r, ns, name, sub, params, body):
        api, m = self.server.api, self.command
        res = r.name
        if r.namespaced and ns is None and name is not None:
            raise NOT_FOUND
        if name is None:
            if m == 'GET':
                if truthy(params.get('watch')):
                    return self.watch(res, ns, params)
                code, out, warn = api.list(res, ns, params)
                return self.reply(code, out, warn, table_of=res)
            if m == 'POST' and ns is not None or m == 'POST' and not r.namespaced:
                return self.reply(*api.create(res, ns or '', body, params))
            if m == 'DELETE':
                return self.reply(*api.delete_collection(res, ns, api.parse_delete_options(body, params), params))
            raise method_not_allowed()
        ns = ns or ''
        if sub == 'log':
            if m != 'GET':
                raise method_not_allowed()
            return self.logs(ns, name, params)
        if sub == 'eviction':
            if m != 'POST':
                raise method_not_allowed()
            return self.reply(*api.evict(ns, name, body))
        if m == 'GET':
            if truthy(params.get('watch')):
                params = dict(params, fieldSelector='metadata.name=' + name)
                return self.watch(res, ns or None, params)
            return self.reply(*api.get(res, ns, name), table_of=res)
        if m == 'PUT':
            return self.reply(*api.update(res, ns, name, body, params, sub))
        if m == 'PATCH':
            return self.reply(*api.patch(res, ns, name, self.headers.get('Content-Type'), body, params, sub))
        if m == 'DELETE' and sub is None:
            return self.reply(*api.delete(res, ns, name, api.parse_delete_options(body, params), params))
        raise method_not_allowed()

    def reply(self, code, out, warnings=(), table_of=None):
        headers = {}
        if warnings:
            headers['Warning'] = ['299 - %s' % json.dumps(w) for w in warnings]
        accept = self.headers.get('Accept', '')
        if table_of and 'as=Table' in accept and kube_tables is not None and code == 200:
            t = kube_tables.to_table(table_of, json.loads(bytes(out)), self.params.get('includeObject', 'Metadata'))
            if t is not None:
                return self.send_body(code, dumpb(t), headers=headers)
        return self.send_body(code, out, headers=headers)

    # ------------------------------------------------------------- watch
    def watch(self, res, ns, params):
        lsel, fsel = selectors(res, params)
        store, r = self.server.api.store, RESOURCES[res]
        try:
            timeout = float(params.get('timeoutSeconds') or 0)
        except ValueError:
            raise bad_request('timeoutSeconds: invalid value')
        if timeout <= 0:
            timeout = 1800.0
        bookmarks = truthy(params.get('allowWatchBookmarks'))
        table = 'as=Table' in self.headers.get('Accept', '') and kube_tables is not None
        w, initial, err = store.open_watch(res, ns, lsel, fsel, params.get('resourceVersion', ''))
        self.start_chunked()

        def send(etype, raw):
            if table and etype in ('ADDED', 'MODIFIED', 'DELETED'):
                t = kube_tables.to_table(res, json.loads(raw), self.params.get('includeObject', 'Metadata'))
                if t is not None:
                    raw = dumpb(t)
            self.chunk(b'{"type":"%s","object":%s}\n' % (etype.encode(), raw))

        def bookmark():
            with store.lock:
                rv = store.rv
            send('BOOKMARK', b'{"kind":"%s","apiVersion":"%s","metadata":{"resourceVersion":"%d"}}'
                 % (r.kind.encode(), r.gv.encode(), rv))

        if err is not None:
            self.chunk(b'{"type":"ERROR","object":%s}\n' % dumpb(err))
            self.end_chunked()
            return
        try:
            for etype, raw in initial:
                send(etype, raw)
            start = time.monotonic()
            deadline = start + timeout
            last_bm_at = deadline - min(1.0, timeout / 2)
            next_bm = min(start + self.server.bookmark_seconds, last_bm_at) if bookmarks else None
            while True:
                now = time.monotonic()
                if now >= deadline:
                    break
                wait = deadline - now
                if next_bm is not None:
                    wait = min(wait, max(next_bm - now, 0))
                try:
                    ev = w.q.get(timeout=max(wait, 0.001)) if wait > 0 else w.q.get_nowait()
                except queue.Empty:
                    if next_bm is not None and time.monotonic() >= next_bm:
                        bookmark()
                        nb = time.monotonic() + self.server.bookmark_seconds
                        next_bm = None if next_bm >= last_bm_at else min(nb, last_bm_at)
                    continue
                if ev is CUT:
                    self.close_connection = True
                    try:
                        self.request.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                    return
                t = w.translate(ev)
                if t:
                    send(*t)
            self.end_chunked()
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
            self.close_connection = True
        finally:
            store.close_watch(w)

    # -------------------------------------------------------------- logs
    def logs(self, ns, name, params):
        kubelet = self.server.api.kubelet
        path, alive = kubelet.log_source(ns, name, params.get('container'), truthy(params.get('previous')))
        follow = truthy(params.get('follow'))
        stamps = truthy(params.get('timestamps'))
        tail = int(params['tailLines']) if params.get('tailLines') else None
        since = float(params['sinceSeconds']) if params.get('sinceSeconds') else None
        limit = int(params['limitBytes']) if params.get('limitBytes') else None
        since_ts = time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime(time.time() - since)) if since else None

        def render(lines):
            out = []
            for line in lines:
                try:
                    ts, _stream, tag, text = line.split(b' ', 3)
                except ValueError:
                    continue
                if since_ts and ts.decode()[:19] < since_ts:
                    continue
                out.append((ts + b' ' if stamps else b'') + text + (b'\n' if tag == b'F' else b''))
            return b''.join(out)

        def read_from(pos):
            try:
                with open(path, 'rb') as f:
                    f.seek(pos)
                    data = f.read()
            except OSError:
                return pos, []
            cut = data.rfind(b'\n') + 1
            return pos + cut, data[:cut].split(b'\n')[:-1]

        pos, lines = read_from(0)
        if tail is not None:
            lines = lines[-tail:] if tail > 0 else []
        first = render(lines)
        if limit is not None:
            first = first[:limit]
        if not follow:
            return self.send_body(200, first, 'text/plain')
        self.start_chunked('text/plain')
        sent = len(first)
        try:
            self.chunk(first)
            while True:
                running = alive()
                pos, lines = read_from(pos)
                data = render(lines)
                if limit is not None:
                    data = data[:max(limit - sent, 0)]
                sent += len(data)
                self.chunk(data)
                if not running and not lines or (limit is not None and sent >= limit):
                    break
                if not lines:
                    time.sleep(0.1)
            self.end_chunked()
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
            self.close_connection = True

    # ------------------------------------------------------------ faults
    def fake(self, what, body):
        if self.command == 'GET' and what == 'processes':
            return self.send_body(200, dumpb(self.server.api.kubelet.process_table()))
        if self.command != 'POST':
            raise method_not_allowed()
        req = json.loads(body or b'{}') if body.strip() else {}
        if req.get('inject') == 'throttle' or what == 'throttle':
            with self.server.throttle_lock:
                self.server.throttle = [int(req.get('count', 1)), int(req.get('retry_after', 1))]
            return self.send_body(200, dumpb({'inject': 'throttle', 'count': self.server.throttle[0]}))
        return self.send_body(200, dumpb(self.server.api.inject(what, body)))


def make_server(cfg, api, token, cert, key):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    ctx.set_alpn_protocols(['http/1.1'])
    return Server(('127.0.0.1', int(cfg['port'])), api, ctx, token, cfg)
