# Helpers shared by the modules of the fake Kubernetes API server (kappa):
# the resource table, times, quantities, label and field selectors, the
# apiserver's Status errors, name validation, merge and JSON patches.
import base64
import json
import random
import re
import time

# ------------------------------------------------------------------ resources


class Res:
    """One API resource: where it lives, what it is called, what it allows."""

    def __init__(self, name, group, kind, namespaced, short, verbs, subresources=(), singular=None):
        self.name, self.group, self.kind, self.namespaced = name, group, kind, namespaced
        self.short, self.verbs, self.subresources = short, verbs, subresources
        self.singular = singular or kind.lower()
        self.version = 'v1'
        self.gv = (group + '/v1') if group else 'v1'
        # jobs.batch "x" not found / pods "x" not found
        self.qualified = name + ('.' + group if group else '')
        # Job.batch "x" is invalid / Pod "x" is invalid
        self.kind_qualified = kind + ('.' + group if group else '')


ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']
RESOURCES = {r.name: r for r in [
    Res('namespaces', '', 'Namespace', False, ['ns'], ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
        ['status']),
    Res('nodes', '', 'Node', False, ['no'], ALL_VERBS, ['status']),
    Res('pods', '', 'Pod', True, ['po'], ALL_VERBS, ['status', 'log', 'eviction']),
    Res('services', '', 'Service', True, ['svc'], ALL_VERBS, ['status']),
    Res('configmaps', '', 'ConfigMap', True, ['cm'], ALL_VERBS),
    Res('secrets', '', 'Secret', True, [], ALL_VERBS),
    Res('events', '', 'Event', True, ['ev'], ALL_VERBS),
    Res('jobs', 'batch', 'Job', True, [], ALL_VERBS, ['status']),
]}


def truthy(v):
    """Go's strconv.ParseBool, as the apiserver reads boolean parameters."""
    return v in ('1', 't', 'T', 'true', 'TRUE', 'True')


def dumps(obj):
    return json.dumps(obj, separators=(',', ':'), ensure_ascii=False)


def dumpb(obj):
    return dumps(obj).encode()

# ---------------------------------------------------------------------- times


def rfc3339(t=None):
    return time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(time.time() if t is None else t))


def parse_rfc3339(s):
    if not s:
        return None
    s = s.rstrip('Z').split('.')[0]
    try:
        return time.mktime(time.strptime(s, '%Y-%m-%dT%H:%M:%S')) - time.timezone
    except ValueError:
        return None


def age(ts, now=None):
    """kubectl's short age: 5s, 3m12s, 4h, 2d."""
    t = parse_rfc3339(ts)
    if t is None:
        return '<unknown>'
    d = int((now or time.time()) - t)
    if d < 0:
        d = 0
    if d < 120:
        return '%ds' % d
    if d < 600:
        return '%dm%ds' % (d // 60, d % 60) if d % 60 else '%dm' % (d // 60)
    if d < 3 * 3600:
        return '%dm' % (d // 60)
    if d < 8 * 3600:
        return '%dh%dm' % (d // 3600, (d % 3600) // 60) if (d % 3600) // 60 else '%dh' % (d // 3600)
    if d < 48 * 3600:
        return '%dh' % (d // 3600)
    return '%dd' % (d // 86400)

# ----------------------------------------------------------------- quantities


_SUFFIX = {'': 1, 'm': 1e-3, 'k': 1e3, 'M': 1e6, 'G': 1e9, 'T': 1e12, 'P': 1e15, 'E': 1e18,
           'Ki': 2**10, 'Mi': 2**20, 'Gi': 2**30, 'Ti': 2**40, 'Pi': 2**50, 'Ei': 2**60}
_QRE = re.compile(r'^([+-]?[0-9.]+)([eE][+-]?[0-9]+|[a-zA-Z]*)$')


def parse_quantity(q):
    """A Kubernetes quantity as a float (cores, bytes, counts). ValueError if
    it is not one."""
    if isinstance(q, (int, float)) and not isinstance(q, bool):
        return float(q)
    m = _QRE.match(str(q).strip())
    if not m or (m.group(2) not in _SUFFIX and not re.match(r'^[eE][+-]?[0-9]+$', m.group(2))):
        raise ValueError('quantities must match the regular expression '
                         "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
    num, suf = float(m.group(1)), m.group(2)
    if suf not in _SUFFIX:
        return num * 10 ** int(suf[1:])
    return num * _SUFFIX[suf]

# ---------------------------------------------------------- label selectors


class SelectorError(ValueError):
    pass


_LABEL_KEY = re.compile(r'^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?'
                        r'[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$')


def parse_label_selector(text):
    """'a=b,c!=d,e in (x,y),f notin (z),g,!h' -> [(key, op, [values])]."""
    reqs = []
    text = (text or '').strip()
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i] in ' ,':
            i += 1
        if i >= n:
            break
        neg = False
        if text[i] == '!':
            neg = True
            i += 1
        m = re.compile(r'\s*([A-Za-z0-9_./-]+)\s*').match(text, i)
        if not m:
            raise SelectorError('unable to parse requirement: found \'%s\', expected: identifier' % text[i:i + 1])
        key = m.group(1)
        i = m.end()
        if neg:
            reqs.append((key, '!', []))
            continue
        rest = text[i:]
        if i >= n or text[i] == ',':
            reqs.append((key, 'exists', []))
            continue
        m2 = re.match(r'(==|!=|=)\s*([A-Za-z0-9_.-]*)\s*', rest)
        if m2:
            reqs.append((key, '!=' if m2.group(1) == '!=' else '=', [m2.group(2)]))
            i += m2.end()
            continue
        m3 = re.match(r'(in|notin)\s*\(([^)]*)\)\s*', rest)
        if m3:
            vals = [v.strip() for v in m3.group(2).split(',') if v.strip()]
            reqs.append((key, m3.group(1), vals))
            i += m3.end()
            continue
        raise SelectorError('unable to parse requirement: found \'%s\', expected: in, notin, =, ==, !=, gt, lt'
                            % rest.split()[0] if rest.split() else rest)
    for key, _, _ in reqs:
        if not _LABEL_KEY.match(key):
            raise SelectorError('unable to parse requirement: values[0][%s]: Invalid value: "%s": name part must '
                                'consist of alphanumeric characters' % (key, key))
    return reqs


def selector_from_label_selector(sel):
    """A metav1.LabelSelector (matchLabels, matchExpressions) as requirements."""
    reqs = [(k, '=', [v]) for k, v in sorted((sel or {}).get('matchLabels', {}).items())]
    for e in (sel or {}).get('matchExpressions', []) or []:
        op = {'In': 'in', 'NotIn': 'notin', 'Exists': 'exists', 'DoesNotExist': '!'}.get(e.get('operator'))
        if op:
            reqs.append((e.get('key', ''), op, list(e.get('values') or [])))
    return reqs


def label_selector_string(sel):
    parts = []
    for k, op, vals in selector_from_label_selector(sel):
        parts.append({'=': '%s=%s' % (k, vals[0] if vals else ''), 'in': '%s in (%s)' % (k, ','.join(vals)),
                      'notin': '%s notin (%s)' % (k, ','.join(vals)), 'exists': k, '!': '!' + k}[op])
    return ','.join(parts)


def labels_match(reqs, labels):
    labels = labels or {}
    for key, op, vals in reqs:
        has = key in labels
        v = labels.get(key)
        if op == '=' and (not has or v != vals[0]):
            return False
        if op == '!=' and has and v == vals[0]:
            return False
        if op == 'in' and (not has or v not in vals):
            return False
        if op == 'notin' and has and v in vals:
            return False
        if op == 'exists' and not has:
            return False
        if op == '!' and has:
            return False
    return True

# ---------------------------------------------------------- field selectors


FIELD_LABELS = {
    'pods': {'metadata.name', 'metadata.namespace', 'spec.nodeName', 'spec.restartPolicy', 'spec.schedulerName',
             'spec.serviceAccountName', 'spec.hostNetwork', 'status.phase', 'status.podIP', 'status.podIPs',
             'status.nominatedNodeName'},
    'nodes': {'metadata.name', 'spec.unschedulable'},
    'jobs': {'metadata.name', 'metadata.namespace', 'status.successful'},
    'namespaces': {'metadata.name', 'status.phase'},
    'events': {'metadata.name', 'metadata.namespace', 'involvedObject.kind', 'involvedObject.namespace',
               'involvedObject.name', 'involvedObject.uid', 'involvedObject.apiVersion',
               'involvedObject.resourceVersion', 'involvedObject.fieldPath', 'reason', 'reportingComponent',
               'source', 'type'},
    'secrets': {'metadata.name', 'metadata.namespace', 'type'},
}


def parse_field_selector(res, text):
    reqs = []
    for part in (text or '').split(','):
        part = part.strip()
        if not part:
            continue
        m = re.match(r'^([A-Za-z0-9_.\[\]]+)\s*(==|!=|=)\s*(.*)$', part)
        if not m:
            raise SelectorError('invalid selector: \'%s\'; can\'t understand \'%s\'' % (text, part))
        key, op, val = m.group(1), m.group(2), m.group(3)
        allowed = FIELD_LABELS.get(res, {'metadata.name', 'metadata.namespace'})
        if key not in allowed:
            raise SelectorError('field label not supported: %s' % key)
        reqs.append((key, '!=' if op == '!=' else '=', val))
    return reqs


def fields_of(res, obj):
    md, spec, st = obj.get('metadata', {}), obj.get('spec') or {}, obj.get('status') or {}
    f = {'metadata.name': md.get('name', ''), 'metadata.namespace': md.get('namespace', '')}
    if res == 'pods':
        f.update({'spec.nodeName': spec.get('nodeName', ''), 'spec.restartPolicy': spec.get('restartPolicy', ''),
                  'spec.schedulerName': spec.get('schedulerName', ''),
                  'spec.serviceAccountName': spec.get('serviceAccountName', ''),
                  'spec.hostNetwork': 'true' if spec.get('hostNetwork') else 'false',
                  'status.phase': st.get('phase', ''), 'status.podIP': st.get('podIP', ''),
                  'status.podIPs': st.get('podIP', ''), 'status.nominatedNodeName': st.get('nominatedNodeName', '')})
    elif res == 'nodes':
        f['spec.unschedulable'] = 'true' if spec.get('unschedulable') else 'false'
    elif res == 'jobs':
        f['status.successful'] = str(st.get('succeeded', 0))
    elif res == 'namespaces':
        f['status.phase'] = st.get('phase', '')
    elif res == 'events':
        io = obj.get('involvedObject') or {}
        for k in ('kind', 'namespace', 'name', 'uid', 'apiVersion', 'resourceVersion', 'fieldPath'):
            f['involvedObject.' + k] = io.get(k, '')
        f.update({'reason': obj.get('reason', ''), 'type': obj.get('type', ''),
                  'reportingComponent': obj.get('reportingComponent', ''),
                  'source': (obj.get('source') or {}).get('component', '')})
    elif res == 'secrets':
        f['type'] = obj.get('type', '')
    return f


def fields_match(reqs, fields):
    for key, op, val in reqs:
        v = fields.get(key, '')
        if (op == '=') != (v == val):
            return False
    return True

# ------------------------------------------------------------------- errors


class ApiError(Exception):
    def __init__(self, code, reason, message, details=None, headers=None):
        super().__init__(message)
        self.code, self.reason, self.message, self.details = code, reason, message, details
        self.headers = headers or {}

    def status(self):
        st = {'kind': 'Status', 'apiVersion': 'v1', 'metadata': {}, 'status': 'Failure', 'message': self.message}
        if self.reason:
            st['reason'] = self.reason
        if self.details is not None:
            st['details'] = self.details
        st['code'] = self.code
        return st


def _details(res, name):
    d = {}
    if name:
        d['name'] = name
    if res.group:
        d['group'] = res.group
    d['kind'] = res.name
    return d


def not_found(res, name):
    return ApiError(404, 'NotFound', '%s "%s" not found' % (res.qualified, name), _details(res, name))


def already_exists(res, name):
    return ApiError(409, 'AlreadyExists', '%s "%s" already exists' % (res.qualified, name), _details(res, name))


def conflict(res, name, why=None):
    return ApiError(409, 'Conflict', 'Operation cannot be fulfilled on %s "%s": %s' % (
        res.qualified, name, why or 'the object has been modified; please apply your changes to the latest '
                                    'version and try again'), _details(res, name))


def invalid(res, name, causes):
    """CAUSES: [(field, message, reason)] -> 422 Invalid as the apiserver says it."""
    msgs = ['%s: %s' % (f, m) for f, m, _ in causes]
    text = msgs[0] if len(msgs) == 1 else '[' + ', '.join(msgs) + ']'
    d = {'name': name or ''}
    if res.group:
        d['group'] = res.group
    d['kind'] = res.kind
    d['causes'] = [{'reason': r, 'message': m, 'field': f} for f, m, r in causes]
    return ApiError(422, 'Invalid', '%s "%s" is invalid: %s' % (res.kind_qualified, name or '', text), d)


def bad_request(message):
    return ApiError(400, 'BadRequest', message)


def method_not_allowed(message='the server does not allow this method on the requested resource'):
    return ApiError(405, 'MethodNotAllowed', message, {})


def expired(message):
    return ApiError(410, 'Expired', message)

# ------------------------------------------------------------------- names


_DNS1123_SUB = re.compile(r'^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')
_DNS1123_LABEL = re.compile(r'^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')
_DNS1035_LABEL = re.compile(r'^[a-z]([-a-z0-9]*[a-z0-9])?$')


def name_errors(kind, name):
    """Messages of the apiserver's name validation for KIND ('subdomain',
    'label' or 'dns1035')."""
    errs = []
    if kind == 'subdomain':
        if len(name) > 253:
            errs.append('must be no more than 253 characters')
        if not _DNS1123_SUB.match(name):
            errs.append("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
                        "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex "
                        "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
    elif kind == 'label':
        if len(name) > 63:
            errs.append('must be no more than 63 characters')
        if not _DNS1123_LABEL.match(name):
            errs.append("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
                        "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
                        "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
    else:
        if len(name) > 63:
            errs.append('must be no more than 63 characters')
        if not _DNS1035_LABEL.match(name):
            errs.append("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
                        "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
                        "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")
    return errs


_ALNUM = 'bcdfghjklmnpqrstvwxz2456789'


def rand_suffix(n=5):
    return ''.join(random.choice(_ALNUM) for _ in range(n))

# ------------------------------------------------------------------ patches


def merge_patch(target, patch):
    """RFC 7386 JSON merge patch (also used for strategic merge patches)."""
    if not isinstance(patch, dict):
        return patch
    if not isinstance(target, dict):
        target = {}
    out = dict(target)
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


def _ptr(path):
    if path == '':
        return []
    if not path.startswith('/'):
        raise ValueError('invalid JSON pointer %r' % path)
    return [p.replace('~1', '/').replace('~0', '~') for p in path[1:].split('/')]


def json_patch(doc, ops):
    """RFC 6902 JSON patch: add, remove, replace, test, move, copy."""
    doc = json.loads(json.dumps(doc))
    if not isinstance(ops, list):
        raise ValueError('json patch must be a list of operations')

    def parent(parts):
        cur = doc
        for p in parts[:-1]:
            cur = cur[int(p)] if isinstance(cur, list) else cur[p]
        return cur

    def get(path):
        cur = doc
        for p in _ptr(path):
            cur = cur[int(p)] if isinstance(cur, list) else cur[p]
        return cur

    for op in ops:
        kind, parts = op.get('op'), _ptr(op.get('path', ''))
        if kind == 'test':
            if get(op['path']) != op.get('value'):
                raise ValueError('testing value %s failed' % op['path'])
            continue
        if kind in ('move', 'copy'):
            val = json.loads(json.dumps(get(op['from'])))
            if kind == 'move':
                fp = _ptr(op['from'])
                fpar = parent(fp)
                if isinstance(fpar, list):
                    fpar.pop(int(fp[-1]))
                else:
                    del fpar[fp[-1]]
            kind, op = 'add', dict(op, value=val)
        if not parts:
            doc = op.get('value')
            continue
        par, last = parent(parts), parts[-1]
        if kind == 'add':
            if isinstance(par, list):
                par.insert(len(par) if last == '-' else int(last), op.get('value'))
            else:
                par[last] = op.get('value')
        elif kind == 'replace':
            if isinstance(par, list):
                par[int(last)] = op.get('value')
            else:
                if last not in par:
                    raise ValueError('replace operation does not apply: doc is missing key: %s' % op['path'])
                par[last] = op.get('value')
        elif kind == 'remove':
            if isinstance(par, list):
                par.pop(int(last))
            else:
                if last not in par:
                    raise ValueError('remove operation does not apply: doc is missing path: %s' % op['path'])
                del par[last]
        else:
            raise ValueError('Unexpected kind: %s' % kind)
    return doc

# ------------------------------------------------------------- continue tokens


def encode_continue(rv, start_key):
    raw = dumps({'v': 'meta.k8s.io/v1', 'rv': rv, 'start': start_key + '\x00'})
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip('=')


def decode_continue(tok):
    try:
        raw = base64.urlsafe_b64decode(tok + '=' * (-len(tok) % 4))
        d = json.loads(raw)
        if d.get('v') != 'meta.k8s.io/v1':
            raise ValueError
        return int(d['rv']), d['start'].rstrip('\x00')
    except Exception:  # noqa: BLE001
        raise bad_request('continue key is not valid: incorrect encoded start resourceVersion (version '
                          'meta.k8s.io/v1)')
