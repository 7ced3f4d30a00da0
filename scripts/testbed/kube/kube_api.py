# The verbs of the fake API server on its resources: get, list, create,
# update (PUT), patch, delete (with DeleteOptions and garbage-collection
# policies), deletecollection, the pods/eviction subresource, and the /_fake/
# fault injections. kube_http.py parses the request and calls these; they
# return (HTTP code, body bytes, warnings) or raise ApiError.
import json
import time

import kube_objects as ko
import kube_patch
import kube_proto
from kube_util import (RESOURCES, ApiError, SelectorError, bad_request, conflict, dumpb, json_patch, merge_patch,
                       not_found, parse_field_selector, parse_label_selector, rfc3339)

# batch/v1 Jobs keep the old default of the REST API: a DELETE without a
# propagation policy orphans the pods (kubectl always sends Background).
DEFAULT_POLICY = {'jobs': 'Orphan'}
PROTECTED_NAMESPACES = ('default', 'kube-system', 'kube-public')
# What the garbage collector looks after: objects that may name an owner.
DEPENDENT_RESOURCES = ('pods', 'services', 'configmaps', 'secrets')
# The owners' kinds it can look up (an owner of another kind is left be).
OWNER_RESOURCES = {'Job': 'jobs', 'Pod': 'pods', 'Service': 'services', 'ConfigMap': 'configmaps',
                   'Secret': 'secrets'}


def success_status(res, name, uid):
    r = RESOURCES[res]
    det = {'name': name}
    if r.group:
        det['group'] = r.group
    det['kind'] = r.name
    if uid:
        det['uid'] = uid
    return dumpb({'kind': 'Status', 'apiVersion': 'v1', 'metadata': {}, 'status': 'Success', 'details': det})


def selectors(res, params):
    try:
        return (parse_label_selector(params.get('labelSelector', '')),
                parse_field_selector(res, params.get('fieldSelector', '')))
    except SelectorError as e:
        raise bad_request(str(e))


def dry_run(params):
    v = params.get('dryRun')
    if v and v != 'All':
        raise bad_request('dryRun: Unsupported value: "%s": supported values: "All"' % v)
    return v == 'All'


class Api:
    def __init__(self, store, cfg):
        self.store, self.cfg = store, cfg
        self.kubelet = None       # set by fake_apiserver.py (evictions, node loss)
        self.kubelet_nodes = set(n['name'] for n in cfg.get('nodes', []))

    # ------------------------------------------------------------- reads
    def get(self, res, ns, name):
        raw = self.store.get_raw(res, ns, name)
        if raw is None:
            raise not_found(RESOURCES[res], name)
        return 200, raw, []

    def list(self, res, ns, params):
        lsel, fsel = selectors(res, params)
        try:
            limit = int(params.get('limit') or 0)
        except ValueError:
            raise bad_request('limit: Invalid value: "%s"' % params.get('limit'))
        return 200, self.store.list_page(res, ns, lsel, fsel, max(limit, 0), params.get('continue') or None), []

    def _check_namespace(self, res, ns, name):
        if not RESOURCES[res].namespaced:
            return
        nso = self.store.peek('namespaces', '', ns)
        if nso is None:
            raise not_found(RESOURCES['namespaces'], ns)
        if nso.get('metadata', {}).get('deletionTimestamp'):
            raise ApiError(403, 'Forbidden', '%s "%s" is forbidden: unable to create new content in namespace %s '
                           'because it is being terminated' % (RESOURCES[res].qualified, name, ns),
                           {'name': name, 'kind': res, 'causes': [{'reason': 'NamespaceTerminating', 'message':
                            'namespace %s is being terminated' % ns, 'field': 'metadata.namespace'}]})

    # ------------------------------------------------------------ create
    def create(self, res, ns, body, params):
        obj = self.parse_json(body)
        ko.check_type(res, obj)
        clean, warnings = ko.decode_body(res, obj, params.get('fieldValidation', 'Warn'))
        with self.store.lock:
            self._check_namespace(res, ns, clean.get('metadata', {}).get('name', ''))
            ko.prepare_create(self.store, res, ns, clean, self.cfg)
            if dry_run(params):
                if self.store.peek(res, ns, clean['metadata']['name']) is not None:
                    from kube_util import already_exists
                    raise already_exists(RESOURCES[res], clean['metadata']['name'])
                return 201, dumpb(dict({'kind': RESOURCES[res].kind, 'apiVersion': RESOURCES[res].gv}, **clean)), \
                    warnings
            return 201, self.store.create(res, clean), warnings

    def create_internal(self, res, obj):
        """Creation by a controller (lock held): no decoding."""
        ns = obj.get('metadata', {}).get('namespace', '')
        ko.prepare_create(self.store, res, ns, obj, self.cfg)
        return self.store.create(res, obj)

    @staticmethod
    def parse_json(body):
        if body and body.startswith(kube_proto.MAGIC):
            try:
                return kube_proto.decode(body)
            except (kube_proto.ProtoError, KeyError, IndexError, UnicodeDecodeError, ValueError) as e:
                raise ApiError(415, 'UnsupportedMediaType', str(e), {})
        try:
            return json.loads(body or b'{}')
        except ValueError as e:
            raise bad_request("couldn't get version/kind; json parse error: %s" % e)

    # ------------------------------------------------------ update / patch
    def _finish_update(self, res, ns, name, old, new, params, sub, warnings):
        """Shared by PUT and PATCH: subresource rules, immutability, commit."""
        r = RESOURCES[res]
        new.pop('kind', None)
        new.pop('apiVersion', None)
        want_rv = new.get('metadata', {}).get('resourceVersion')
        if want_rv and want_rv != old['metadata'].get('resourceVersion'):
            raise conflict(r, name)
        if sub == 'status':
            merged = json.loads(json.dumps(old))
            merged['status'] = new.get('status', {})
            new = merged
        else:
            if 'status' in old or 'status' in new:
                new['status'] = old.get('status', {}) if res not in ('configmaps', 'secrets', 'events') else \
                    new.get('status')
                if new['status'] is None:
                    new.pop('status')
            md, omd = new.setdefault('metadata', {}), old['metadata']
            for f in ('uid', 'creationTimestamp', 'generation', 'deletionTimestamp', 'deletionGracePeriodSeconds'):
                if f in omd:
                    md[f] = omd[f]
                else:
                    md.pop(f, None)
            md.setdefault('name', omd['name'])
            if r.namespaced:
                md.setdefault('namespace', omd['namespace'])
            ko.validate_update(res, old, new)
            if res == 'jobs' and new.get('spec') != old.get('spec'):
                md['generation'] = omd.get('generation', 1) + 1
            if res == 'pods':
                ko.default_pod_spec(new.setdefault('spec', {}))
        new['metadata']['resourceVersion'] = old['metadata']['resourceVersion']
        if dry_run(params):
            return 200, dumpb(dict({'kind': r.kind, 'apiVersion': r.gv}, **new)), warnings
        return 200, self.store.replace(res, new), warnings

    def update(self, res, ns, name, body, params, sub=None):
        obj = self.parse_json(body)
        ko.check_type(res, obj)
        clean, warnings = ko.decode_body(res, obj, params.get('fieldValidation', 'Warn'))
        if clean.get('metadata', {}).get('name') not in (None, name):
            raise bad_request('the name of the object (%s) does not match the name on the URL (%s)'
                              % (clean['metadata']['name'], name))
        with self.store.lock:
            old = self.store.peek(res, ns, name)
            if old is None:
                raise not_found(RESOURCES[res], name)
            return self._finish_update(res, ns, name, json.loads(json.dumps(old)), clean, params, sub, warnings)

    def patch(self, res, ns, name, ctype, body, params, sub=None):
        ctype = (ctype or '').split(';')[0].strip()
        if ctype not in ('application/merge-patch+json', 'application/strategic-merge-patch+json',
                         'application/json-patch+json', 'application/apply-patch+yaml'):
            raise ko.unsupported_media(ctype)
        try:
            patch = json.loads(body or b'null')
        except ValueError as e:
            if ctype == 'application/apply-patch+yaml':
                raise ko.unsupported_media(ctype)
            raise bad_request('error decoding patch: %s' % e)
        with self.store.lock:
            old = self.store.peek(res, ns, name)
            if old is None:
                raise not_found(RESOURCES[res], name)
            cur = json.loads(json.dumps(old))
            full = dict({'kind': RESOURCES[res].kind, 'apiVersion': RESOURCES[res].gv}, **cur)
            try:
                if ctype == 'application/json-patch+json':
                    new = json_patch(full, patch)
                else:
                    if not isinstance(patch, dict):
                        raise ValueError('patch must be a JSON object')
                    new = merge_patch(full, patch) if ctype == 'application/merge-patch+json' else \
                        kube_patch.strategic(full, patch)
            except (ValueError, KeyError, IndexError, TypeError) as e:
                raise ApiError(422, 'Invalid', 'the server rejected our request due to an error in our request: %s'
                               % e, {})
            clean, warnings = ko.decode_body(res, new, params.get('fieldValidation', 'Warn'))
            clean.setdefault('metadata', {})['resourceVersion'] = \
                (patch.get('metadata') or {}).get('resourceVersion') if isinstance(patch, dict) else None
            if not clean['metadata']['resourceVersion']:
                clean['metadata'].pop('resourceVersion')
            return self._finish_update(res, ns, name, cur, clean, params, sub, warnings)

    # ------------------------------------------------------------ delete
    def parse_delete_options(self, body, params):
        opts = {}
        if body and body.strip():
            opts = self.parse_json(body)
            if not isinstance(opts, dict):
                raise bad_request('DeleteOptions must be a JSON object')
        for k in ('gracePeriodSeconds', 'propagationPolicy', 'orphanDependents'):
            if k in params and k not in opts:
                v = params[k]
                opts[k] = int(v) if k == 'gracePeriodSeconds' else (v == 'true' if k == 'orphanDependents' else v)
        if opts.get('propagationPolicy') not in (None, 'Background', 'Foreground', 'Orphan'):
            raise ApiError(422, 'Invalid', 'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: '
                           'Unsupported value: "%s": supported values: "Foreground", "Background", "Orphan", "nil"'
                           % opts['propagationPolicy'], {'kind': 'DeleteOptions', 'group': 'meta.k8s.io'})
        return opts

    def delete(self, res, ns, name, opts, params=None):
        r = RESOURCES[res]
        params = params or {}
        with self.store.lock:
            obj = self.store.peek(res, ns, name)
            if obj is None:
                raise not_found(r, name)
            md = obj['metadata']
            pre = opts.get('preconditions') or {}
            if pre.get('uid') and pre['uid'] != md.get('uid'):
                raise conflict(r, name, 'Precondition failed: UID in precondition: %s, UID in object meta: %s'
                               % (pre['uid'], md.get('uid')))
            if pre.get('resourceVersion') and pre['resourceVersion'] != md.get('resourceVersion'):
                raise conflict(r, name, 'Precondition failed: ResourceVersion in precondition: %s, '
                               'ResourceVersion in object meta: %s' % (pre['resourceVersion'],
                                                                      md.get('resourceVersion')))
            if res == 'namespaces' and name in PROTECTED_NAMESPACES:
                raise ApiError(403, 'Forbidden', 'namespaces "%s" is forbidden: this namespace may not be deleted'
                               % name, {'name': name, 'kind': 'namespaces'})
            if dry_run(params):
                return 200, self.store.get_raw(res, ns, name), []
            policy = opts.get('propagationPolicy')
            if policy is None and opts.get('orphanDependents') is not None:
                policy = 'Orphan' if opts['orphanDependents'] else 'Background'
            policy = policy or DEFAULT_POLICY.get(res, 'Background')
            if res == 'pods':
                return self._delete_pod(ns, name, obj, opts.get('gracePeriodSeconds'))
            if res == 'namespaces':
                if not md.get('deletionTimestamp'):
                    def mark(o):
                        o['metadata']['deletionTimestamp'] = rfc3339()
                        o['status']['phase'] = 'Terminating'
                    return 200, self.store.update(res, ns, name, mark), []
                return 200, self.store.get_raw(res, ns, name), []
            uid = md.get('uid')
            if policy == 'Foreground' and res == 'jobs':
                def fg(o):
                    o['metadata'].setdefault('deletionTimestamp', rfc3339())
                    o['metadata']['deletionGracePeriodSeconds'] = 0
                    fins = o['metadata'].setdefault('finalizers', [])
                    if 'foregroundDeletion' not in fins:
                        fins.append('foregroundDeletion')
                return 200, self.store.update(res, ns, name, fg), []
            if policy == 'Orphan':
                for dres, p in self.dependents(ns, uid):
                    self.store.update(dres, ns, p['metadata']['name'], lambda o: o['metadata'].update(
                        ownerReferences=[x for x in o['metadata'].get('ownerReferences', [])
                                         if x.get('uid') != uid]) or self._drop_empty_owner(o))
            self.store.remove(res, ns, name)
            return 200, success_status(res, name, uid), []

    @staticmethod
    def _drop_empty_owner(o):
        if not o['metadata'].get('ownerReferences'):
            o['metadata'].pop('ownerReferences', None)

    def dependents(self, ns, uid):
        """(resource, object) of every object in NS owned by the object with
        UID: pods, services, config maps, secrets (lock held)."""
        return [(res, o) for res in DEPENDENT_RESOURCES for o in self.store.objects(res, ns)
                if any(x.get('uid') == uid for x in o['metadata'].get('ownerReferences', []))]

    def _delete_pod(self, ns, name, obj, grace):
        """Graceful deletion: a pod whose containers may still run gets a
        deletionTimestamp; the kubelet kills it and removes the object."""
        md, spec, st = obj['metadata'], obj.get('spec', {}), obj.get('status', {})
        if grace is None:
            grace = spec.get('terminationGracePeriodSeconds', 30)
        running = (spec.get('nodeName') in self.kubelet_nodes and st.get('phase') not in ('Succeeded', 'Failed')
                   and self.kubelet is not None)
        if running and grace > 0:
            cur_grace = md.get('deletionGracePeriodSeconds')
            if md.get('deletionTimestamp') and cur_grace is not None and cur_grace <= grace:
                return 200, self.store.get_raw('pods', ns, name), []

            def mark(o):
                o['metadata']['deletionTimestamp'] = rfc3339(time.time() + grace)
                o['metadata']['deletionGracePeriodSeconds'] = grace
            out = self.store.update('pods', ns, name, mark)
            self.store.changed.notify_all()
            return 200, out, []
        last = self.store.get_raw('pods', ns, name)
        self.store.remove('pods', ns, name)
        if self.kubelet is not None:
            self.kubelet.forget(md.get('uid'))
        return 200, last, []

    def delete_collection(self, res, ns, opts, params):
        lsel, fsel = selectors(res, params)
        from kube_util import fields_match, labels_match
        out = []
        with self.store.lock:
            for e in self.store.entries(res, ns or None, include_synthetic=True):
                if labels_match(lsel, e.labels) and fields_match(fsel, e.fields):
                    n = e.fields['metadata.name']
                    try:
                        _, raw, _ = self.delete(res, e.fields['metadata.namespace'], n, opts, params)
                        if raw and b'"kind":"Status"' not in raw[:40]:
                            o = json.loads(raw)
                            o.pop('kind', None)
                            o.pop('apiVersion', None)
                            out.append(dumpb(o))
                        else:
                            out.append(e.raw)
                    except ApiError:
                        pass
            r = RESOURCES[res]
            items = out
            body = (b'{"kind":"%sList","apiVersion":"%s","metadata":{"resourceVersion":"%d"},"items":['
                    % (r.kind.encode(), r.gv.encode(), self.store.rv) + b','.join(items) + b']}')
        return 200, body, []

    # -------------------------------------------------------- subresources
    def evict(self, ns, name, body):
        """POST pods/{name}/eviction: DisruptionTarget, then a graceful delete."""
        ev = self.parse_json(body)
        opts = ev.get('deleteOptions') or {}
        with self.store.lock:
            if self.store.peek('pods', ns, name) is None:
                raise not_found(RESOURCES['pods'], name)
            self.store.update('pods', ns, name, lambda o: set_condition(
                o, 'DisruptionTarget', 'True', 'EvictionByEvictionAPI', 'Eviction API: evicting'))
            self.delete('pods', ns, name, opts)
        return 201, dumpb({'kind': 'Status', 'apiVersion': 'v1', 'metadata': {}, 'status': 'Success',
                           'code': 201}), []

    # ---------------------------------------------------------- injection
    def inject(self, what, body):
        req = self.parse_json(body)
        with self.store.lock:
            if what == 'evict' or 'pod' in req:
                ns, _, name = req.get('pod', '').rpartition('/')
                reason = req.get('reason', 'EvictionByEvictionAPI')
                if reason not in ('EvictionByEvictionAPI', 'PreemptionByScheduler', 'TerminationByKubelet',
                                  'DeletionByTaintManager', 'DeletionByPodGC'):
                    raise bad_request('unknown disruption reason %r' % reason)
                if self.store.peek('pods', ns or 'default', name) is None:
                    raise not_found(RESOURCES['pods'], name)
                self.kubelet.disrupt(ns or 'default', name, reason, req.get('message'))
                return {'evicted': '%s/%s' % (ns or 'default', name), 'reason': reason}
            if what in ('node-lost', 'node-back', 'node'):
                node = req.get('node', '')
                if self.store.peek('nodes', '', node) is None:
                    raise not_found(RESOURCES['nodes'], node)
                back = what == 'node-back' or req.get('ready') in (True, 'True')
                if back:
                    self.kubelet.node_back(node)
                else:
                    self.kubelet.node_lost(node, req.get('status', 'False'))
                return {'node': node, 'ready': back}
            kind = req.get('inject', what)
            if kind == 'gone':
                self.store.inject_gone = True
                return {'inject': 'gone'}
            if kind == 'compact':
                self.store.compact()
                return {'inject': 'compact', 'floor': self.store.floor}
            if kind == 'cut-watches':
                return {'inject': 'cut-watches', 'cut': self.store.cut_watches()}
        raise bad_request('unknown injection %r (see README.md)' % what)


def set_condition(pod, ctype, status, reason=None, message=None):
    """Sets a pod (or job) condition; lastTransitionTime moves only when the
    status changes. Returns False if nothing changed."""
    conds = pod.setdefault('status', {}).setdefault('conditions', [])
    for c in conds:
        if c['type'] == ctype:
            if c.get('status') == status and c.get('reason') == reason and c.get('message') == message:
                return False
            if c.get('status') != status:
                c['lastTransitionTime'] = rfc3339()
            c['status'] = status
            for k, v in (('reason', reason), ('message', message)):
                if v:
                    c[k] = v
                else:
                    c.pop(k, None)
            return True
    c = {'type': ctype, 'status': status, 'lastProbeTime': None, 'lastTransitionTime': rfc3339()}
    if reason:
        c['reason'] = reason
    if message:
        c['message'] = message
    conds.append(c)
    return True
