# The object store of the fake API server: every object of every resource,
# the global resourceVersion (bumped on every write), a window of recent
# events for watches, the fan-out to open watches, paged lists built from
# pre-serialized bytes, and persistence to DIR/state.json.
#
# One lock (self.lock, re-entrant) guards everything. Callers never get a live
# object: reads hand out bytes or fresh copies, writes go through create /
# update / replace / remove, which serialize the new object once. Controllers
# may peek() at an internal object under the lock, never mutate it.
import bisect
import collections
import json
import os
import queue
import threading
import time

from kube_util import (RESOURCES, already_exists, decode_continue, dumpb, encode_continue, expired, fields_match,
                       fields_of, labels_match, not_found)


class Entry:
    __slots__ = ('obj', 'raw', 'labels', 'fields', 'synthetic', 'seq', 'rv')

    def __init__(self, res, obj, raw=None, synthetic=False, seq=0, keep_obj=True):
        md = obj.get('metadata', {})
        self.raw = raw if raw is not None else dumpb(obj)
        self.obj = obj if keep_obj else None
        self.labels = dict(md.get('labels') or {})
        self.fields = fields_of(res, obj)
        self.synthetic = synthetic
        self.seq = seq
        self.rv = md.get('resourceVersion', '')

    def get_obj(self):
        """The internal object (parsed on demand for synthetic entries)."""
        return self.obj if self.obj is not None else json.loads(self.raw)


def key_of(res, ns, name):
    return ('%s/%s' % (ns, name)) if RESOURCES[res].namespaced else name


def full_bytes(res, raw):
    """Item bytes (no kind) -> object bytes with kind and apiVersion first."""
    r = RESOURCES[res]
    head = b'{"kind":"%s","apiVersion":"%s"' % (r.kind.encode(), r.gv.encode())
    return head + (b',' + raw[1:] if len(raw) > 2 else b'}')


_tls = threading.local()


def assemble(head, items, tail):
    """HEAD + ','.join(ITEMS) + TAIL in a buffer that this thread reuses (a
    fresh 2 MB allocation per page costs more in page faults than all the
    rest of a list). Returns a memoryview valid until the thread's next call."""
    total = len(head) + len(tail) + sum(len(x) for x in items) + max(len(items) - 1, 0)
    buf = getattr(_tls, 'buf', None)
    if buf is None or len(buf) < total:
        size = 1 << 20
        while size < total:
            size <<= 1
        buf = _tls.buf = bytearray(size)
    mv = memoryview(buf)
    mv[:len(head)] = head
    pos = len(head)
    first = True
    for x in items:
        if not first:
            mv[pos] = 44    # ','
            pos += 1
        first = False
        n = len(x)
        mv[pos:pos + n] = x
        pos += n
    mv[pos:pos + len(tail)] = tail
    return mv[:total]


class Event:
    __slots__ = ('rv', 'res', 'ns', 'type', 'raw', 'labels', 'fields', 'prev_labels', 'prev_fields')

    def __init__(self, rv, res, ns, etype, raw, labels, fields, prev_labels=None, prev_fields=None):
        self.rv, self.res, self.ns, self.type, self.raw = rv, res, ns, etype, raw
        self.labels, self.fields = labels, fields
        self.prev_labels, self.prev_fields = prev_labels, prev_fields


CUT = object()    # put into a watcher's queue: close the stream without a last chunk


class Watcher:
    def __init__(self, res, ns, lsel, fsel):
        self.res, self.ns, self.lsel, self.fsel = res, ns, lsel, fsel
        self.q = queue.SimpleQueue()

    def _match(self, ns, labels, fields):
        return (not self.ns or ns == self.ns) and labels_match(self.lsel, labels) and fields_match(self.fsel, fields)

    def translate(self, ev):
        """The (type, object bytes) this watcher sees for EV, or None."""
        new = self._match(ev.ns, ev.labels, ev.fields)
        if ev.type == 'MODIFIED':
            old = self._match(ev.ns, ev.prev_labels, ev.prev_fields)
            if old and new:
                return 'MODIFIED', ev.raw
            if old:
                return 'DELETED', ev.raw
            if new:
                return 'ADDED', ev.raw
            return None
        return (ev.type, ev.raw) if new else None


class Store:
    def __init__(self, window=2000, state_path=None):
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
        self.rv = 1
        self.data = {r: {} for r in RESOURCES}
        self.keys = {r: [] for r in RESOURCES}
        self.real = {r: {} for r in RESOURCES}   # the non-synthetic entries, for controllers
        self.window = collections.deque()
        self.window_max = window
        self.floor = self.rv          # a watch from RV N is served iff N >= floor
        self.watchers = {r: set() for r in RESOURCES}
        self.state_path = state_path
        self.dirty = False
        self.inject_gone = False
        self.generation = 0           # bumped on every commit, for waiters

    # ------------------------------------------------------------ writes
    def _event(self, res, ns, etype, entry, prev=None):
        ev = Event(self.rv, res, ns, etype, full_bytes(res, entry.raw), entry.labels, entry.fields,
                   prev.labels if prev else None, prev.fields if prev else None)
        self.window.append(ev)
        while len(self.window) > self.window_max:
            self.floor = self.window.popleft().rv
        for w in self.watchers[res]:
            w.q.put(ev)
        if not entry.synthetic:
            self.dirty = True
        self.generation += 1
        self.changed.notify_all()

    def _put(self, res, key, entry):
        d = self.data[res]
        if key not in d:
            bisect.insort(self.keys[res], key)
        d[key] = entry
        if not entry.synthetic:
            self.real[res][key] = entry

    def create(self, res, obj, synthetic=False):
        """Stores OBJ (metadata already filled, no kind needed); returns the
        object bytes."""
        with self.lock:
            md = obj['metadata']
            key = key_of(res, md.get('namespace', ''), md['name'])
            if key in self.data[res]:
                raise already_exists(RESOURCES[res], md['name'])
            self.rv += 1
            md['resourceVersion'] = str(self.rv)
            obj.pop('kind', None)
            obj.pop('apiVersion', None)
            e = Entry(res, obj, synthetic=synthetic, seq=self.rv)
            self._put(res, key, e)
            self._event(res, md.get('namespace', ''), 'ADDED', e)
            return full_bytes(res, e.raw)

    def update(self, res, ns, name, fn, missing_ok=False):
        """Applies FN to a copy of the object; commits a MODIFIED event if the
        copy changed. FN may return False to skip. Returns the object's bytes
        (None if it is gone and MISSING_OK)."""
        with self.lock:
            key = key_of(res, ns, name)
            e = self.data[res].get(key)
            if e is None:
                if missing_ok:
                    return None
                raise not_found(RESOURCES[res], name)
            obj = json.loads(e.raw)
            if fn(obj) is False:
                return full_bytes(res, e.raw)
            return self._commit_modified(res, key, e, obj)

    def replace(self, res, obj):
        """Replaces the object named in OBJ wholesale (PUT)."""
        with self.lock:
            md = obj['metadata']
            key = key_of(res, md.get('namespace', ''), md['name'])
            e = self.data[res].get(key)
            if e is None:
                raise not_found(RESOURCES[res], md['name'])
            obj.pop('kind', None)
            obj.pop('apiVersion', None)
            return self._commit_modified(res, key, e, obj)

    def _commit_modified(self, res, key, e, obj):
        md = obj['metadata']
        md['resourceVersion'] = e.rv
        if dumpb(obj) == e.raw:
            return full_bytes(res, e.raw)
        self.rv += 1
        md['resourceVersion'] = str(self.rv)
        ne = Entry(res, obj, synthetic=e.synthetic, seq=e.seq)
        self._put(res, key, ne)
        self._event(res, md.get('namespace', ''), 'MODIFIED', ne, e)
        return full_bytes(res, ne.raw)

    def remove(self, res, ns, name):
        """Deletes the object; the DELETED event carries the new RV. Returns
        the last object's bytes or None."""
        with self.lock:
            key = key_of(res, ns, name)
            e = self.data[res].pop(key, None)
            if e is None:
                return None
            self.real[res].pop(key, None)
            i = bisect.bisect_left(self.keys[res], key)
            if i < len(self.keys[res]) and self.keys[res][i] == key:
                del self.keys[res][i]
            obj = json.loads(e.raw)
            self.rv += 1
            obj['metadata']['resourceVersion'] = str(self.rv)
            de = Entry(res, obj, synthetic=e.synthetic, seq=e.seq, keep_obj=False)
            self._event(res, ns, 'DELETED', de)
            return full_bytes(res, de.raw)

    def next_service_ip(self):
        """The lowest free ClusterIP slot (lock held by the caller)."""
        used = {e.get_obj().get('spec', {}).get('clusterIP') for e in self.data['services'].values()}
        n = 0
        while '10.96.%d.%d' % (n // 250, n % 250 + 2) in used:
            n += 1
        return n

    # ------------------------------------------------------------- reads
    def get_raw(self, res, ns, name):
        with self.lock:
            e = self.data[res].get(key_of(res, ns, name))
            return full_bytes(res, e.raw) if e else None

    def get(self, res, ns, name):
        """A private copy of the object (with kind), or None."""
        raw = self.get_raw(res, ns, name)
        return json.loads(raw) if raw else None

    def peek(self, res, ns, name):
        """The internal object (lock held by the caller; never mutate)."""
        e = self.data[res].get(key_of(res, ns, name))
        return e.get_obj() if e else None

    def entries(self, res, ns=None, include_synthetic=False):
        """Internal entries in creation order (lock held by the caller)."""
        src = self.data[res] if include_synthetic else self.real[res]
        out = [e for e in src.values() if ns is None or e.fields['metadata.namespace'] == ns]
        out.sort(key=lambda e: e.seq)
        return out

    def objects(self, res, ns=None):
        return [e.get_obj() for e in self.entries(res, ns)]

    def list_page(self, res, ns, lsel, fsel, limit=0, cont=None):
        """A whole List response as bytes."""
        r = RESOURCES[res]
        with self.lock:
            keys, d = self.keys[res], self.data[res]
            list_rv = self.rv
            if cont:
                list_rv, start = decode_continue(cont)
                if list_rv < self.floor:
                    raise expired('The provided continue parameter is too old to display a consistent list '
                                  'result. You can start a new list without the continue parameter, or use the '
                                  'continue token in this response to retrieve the remainder of the results. '
                                  'Continuing with the provided token results in an inconsistent list - objects '
                                  'that were created, modified, or deleted between the time the first chunk was '
                                  'returned and now may show up in the list.')
                i = bisect.bisect_right(keys, start)
            elif ns and r.namespaced:
                i = bisect.bisect_left(keys, ns + '/')
            else:
                i = 0
            prefix = (ns + '/') if ns and r.namespaced else ''
            items, n, last = [], len(keys), None
            filtered = bool(lsel or fsel)
            while i < n:
                k = keys[i]
                if prefix and not k.startswith(prefix):
                    i = n
                    break
                e = d[k]
                i += 1
                if filtered and not (labels_match(lsel, e.labels) and fields_match(fsel, e.fields)):
                    continue
                items.append(e.raw)
                last = k
                if limit and len(items) >= limit:
                    break
            more = False
            if limit and len(items) >= limit and i < n:
                if prefix:
                    more = keys[i].startswith(prefix)
                else:
                    more = True
            meta = b'{"resourceVersion":"%d"' % list_rv
            if more:
                meta += b',"continue":"' + encode_continue(list_rv, last).encode() + b'"'
                if not filtered:
                    remaining = (bisect.bisect_left(keys, prefix[:-1] + '0') if prefix else n) - i
                    meta += b',"remainingItemCount":%d' % remaining
            meta += b'}'
        head = (b'{"kind":"%sList","apiVersion":"%s","metadata":' % (r.kind.encode(), r.gv.encode()) + meta +
                b',"items":[')
        return assemble(head, items, b']}')

    # ----------------------------------------------------------- watches
    def open_watch(self, res, ns, lsel, fsel, rv_text):
        """Registers a watcher. Returns (watcher, initial [(type, bytes)],
        error Status or None)."""
        with self.lock:
            w = Watcher(res, ns, lsel, fsel)
            initial = []
            if rv_text in ('', '0', None):
                for e in self.entries(res, ns or None, include_synthetic=True):
                    if w._match(e.fields['metadata.namespace'], e.labels, e.fields):
                        initial.append(('ADDED', full_bytes(res, e.raw)))
            else:
                try:
                    n = int(rv_text)
                except ValueError:
                    return None, [], {'kind': 'Status', 'apiVersion': 'v1', 'metadata': {}, 'status': 'Failure',
                                      'message': 'invalid resource version: %s' % rv_text, 'reason': 'BadRequest',
                                      'code': 400}
                if self.inject_gone or n < self.floor:
                    self.inject_gone = False
                    return None, [], {'kind': 'Status', 'apiVersion': 'v1', 'metadata': {}, 'status': 'Failure',
                                      'message': 'too old resource version: %d (%d)' % (
                                          n, max(self.floor, n + 1)),
                                      'reason': 'Expired', 'code': 410}
                for ev in self.window:
                    if ev.rv > n and ev.res == res:
                        t = w.translate(ev)
                        if t:
                            initial.append(t)
            self.watchers[res].add(w)
            return w, initial, None

    def close_watch(self, w):
        with self.lock:
            self.watchers[w.res].discard(w)

    def cut_watches(self):
        with self.lock:
            n = 0
            for ws in self.watchers.values():
                for w in ws:
                    w.q.put(CUT)
                    n += 1
            return n

    def compact(self):
        """Forgets the event window: older watch RVs and continue tokens expire."""
        with self.lock:
            self.window.clear()
            self.rv += 1
            self.floor = self.rv

    # ------------------------------------------------------- persistence
    def bulk_load(self, res, objs, synthetic=False, keep_obj=None):
        """Inserts objects as they are (keeping their resourceVersions), no
        events. Used by the state reload and the synthetic cluster."""
        keep = (not synthetic) if keep_obj is None else keep_obj
        with self.lock:
            d = self.data[res]
            for obj in objs:
                md = obj['metadata']
                obj.pop('kind', None)
                obj.pop('apiVersion', None)
                key = key_of(res, md.get('namespace', ''), md['name'])
                seq = int(md.get('resourceVersion') or 0)
                e = d[key] = Entry(res, obj, synthetic=synthetic, seq=seq, keep_obj=keep)
                if not synthetic:
                    self.real[res][key] = e
            self.keys[res] = sorted(d)

    def load(self):
        if not self.state_path or not os.path.exists(self.state_path):
            return False
        with open(self.state_path) as f:
            state = json.load(f)
        with self.lock:
            for res, objs in state.get('objects', {}).items():
                if res in self.data:
                    self.bulk_load(res, objs)
            self.rv = max(self.rv, int(state.get('resourceVersion', 1)))
            self.floor = self.rv
        return True

    def save(self):
        with self.lock:
            if not self.dirty:
                return
            self.dirty = False
            parts = {res: [e.raw for e in d.values() if not e.synthetic] for res, d in self.data.items()}
            rv = self.rv
        body = b'{"resourceVersion":"%d","savedAt":%d,"objects":{' % (rv, int(time.time()))
        body += b','.join(b'"%s":[' % res.encode() + b',\n'.join(raws) + b']' for res, raws in parts.items())
        body += b'}}\n'
        tmp = self.state_path + '.tmp'
        with open(tmp, 'wb') as f:
            f.write(body)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.state_path)

    def start_saver(self, period=0.5):
        def loop():
            while True:
                time.sleep(period)
                try:
                    self.save()
                except OSError as e:
                    print('state save failed: %s' % e, flush=True)
        if self.state_path:
            threading.Thread(target=loop, name='saver', daemon=True).start()
