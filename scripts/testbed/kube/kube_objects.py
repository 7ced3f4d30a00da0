# What the apiserver does to an object before it is stored: decoding against
# the known fields (strict / warn / ignore, kube_schema.py), defaulting as the
# real defaulters and admission plugins do, and validation with the real
# messages (422 Invalid with causes). Also pod resource arithmetic shared by
# the scheduler and the tables.
import uuid

import kube_schema
from kube_util import (RESOURCES, ApiError, bad_request, invalid, name_errors, parse_quantity, rand_suffix,
                       rfc3339)

STRUCT_OF = {'namespaces': 'Namespace', 'nodes': 'Node', 'pods': 'Pod', 'services': 'Service',
             'configmaps': 'ConfigMap', 'secrets': 'Secret', 'events': 'Event', 'jobs': 'Job'}
NAME_RULE = {'namespaces': 'label', 'services': 'dns1035'}


def decode_body(res, obj, mode):
    """Checks a request object against the known fields. MODE: Strict, Warn
    or Ignore. Returns (object without unknown fields, warnings)."""
    r = RESOURCES[res]
    if not isinstance(obj, dict):
        raise bad_request('%s in version "v1" cannot be handled as a %s: json: cannot unmarshal %s into Go value '
                          'of type struct' % (r.kind, r.kind, type(obj).__name__))
    unknown = []
    try:
        clean = kube_schema.decode(STRUCT_OF[res], obj, unknown=unknown)
    except kube_schema.DecodeError as e:
        raise bad_request('%s in version "v1" cannot be handled as a %s: %s' % (r.kind, r.kind, e))
    if unknown and mode == 'Strict':
        raise bad_request('%s in version "v1" cannot be handled as a %s: strict decoding error: %s' % (
            r.kind, r.kind, ', '.join('unknown field "%s"' % u for u in unknown)))
    warnings = ['unknown field "%s"' % u for u in unknown] if mode != 'Ignore' else []
    return clean, warnings


def check_type(res, obj):
    r = RESOURCES[res]
    av, kind = obj.get('apiVersion'), obj.get('kind')
    if av and av != r.gv:
        raise bad_request('the API version in the data (%s) does not match the expected API version (%s)'
                          % (av, r.gv))
    if kind and kind != r.kind:
        raise bad_request('the kind in the data (%s) does not match the expected kind (%s)' % (kind, r.kind))

# ------------------------------------------------------------------- metadata


def fill_metadata(store, res, ns, obj):
    """name from generateName, namespace, uid, creationTimestamp; checks the
    name. Lock held by the caller (generateName needs a free name)."""
    r = RESOURCES[res]
    md = obj.setdefault('metadata', {})
    if r.namespaced:
        if md.get('namespace') and md['namespace'] != ns:
            raise bad_request('the namespace of the provided object does not match the namespace sent on the '
                              'request')
        md['namespace'] = ns
    else:
        md.pop('namespace', None)
    if not md.get('name'):
        gen = md.get('generateName')
        if not gen:
            raise invalid(r, '', [('metadata.name', 'Required value: name or generateName is required',
                                   'FieldValueRequired')])
        for _ in range(100):
            cand = gen[:58] + rand_suffix()
            if store.peek(res, ns, cand) is None:
                md['name'] = cand
                break
    errs = name_errors(NAME_RULE.get(res, 'subdomain'), md['name'])
    if res == 'jobs' and not errs and len(md['name']) > 63:
        errs = ['must be no more than 63 characters']
    if errs:
        raise invalid(r, md['name'], [('metadata.name', 'Invalid value: "%s": %s' % (md['name'], '; '.join(errs)),
                                       'FieldValueInvalid')])
    md['uid'] = str(uuid.uuid4())
    md['creationTimestamp'] = rfc3339()
    for k in ('resourceVersion', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'selfLink', 'managedFields'):
        md.pop(k, None)
    if res == 'jobs':
        md['generation'] = 1
    return md

# ------------------------------------------------------------------ defaulting


def default_pod_spec(spec, template=False):
    if not template:
        spec.setdefault('restartPolicy', 'Always')
    spec.setdefault('terminationGracePeriodSeconds', 30)
    spec.setdefault('dnsPolicy', 'ClusterFirst')
    spec.setdefault('securityContext', {})
    spec.setdefault('schedulerName', 'default-scheduler')
    for v in spec.get('volumes', []):
        for kind in ('configMap', 'secret', 'downwardAPI', 'projected'):
            if kind in v:
                v[kind].setdefault('defaultMode', 420)
    for c in spec.get('initContainers', []) + spec.get('containers', []):
        c.setdefault('terminationMessagePath', '/dev/termination-log')
        c.setdefault('terminationMessagePolicy', 'File')
        img = c.get('image', '')
        tagged = ':' in img.rsplit('/', 1)[-1] or '@' in img
        c.setdefault('imagePullPolicy', 'Always' if not tagged or img.endswith(':latest') else 'IfNotPresent')
        res = c.setdefault('resources', {})
        lim = res.get('limits') or {}
        if lim:
            req = res.setdefault('requests', {})
            for k, v in lim.items():
                req.setdefault(k, v)
        for p in c.get('ports', []):
            p.setdefault('protocol', 'TCP')
        for e in c.get('env', []):
            fr = (e.get('valueFrom') or {}).get('fieldRef')
            if fr:
                fr.setdefault('apiVersion', 'v1')
    if not template:
        spec.setdefault('serviceAccountName', 'default')
        spec.setdefault('serviceAccount', spec['serviceAccountName'])
        spec.setdefault('enableServiceLinks', True)
        spec.setdefault('preemptionPolicy', 'PreemptLowerPriority')
        spec.setdefault('priority', 0)
        tol = spec.setdefault('tolerations', [])
        for key in ('node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable'):
            if not any(t.get('key') == key and t.get('effect') in (None, '', 'NoExecute') for t in tol):
                tol.append({'key': key, 'operator': 'Exists', 'effect': 'NoExecute', 'tolerationSeconds': 300})
    return spec


def qos_class(spec):
    reqs, lims, any_set = [], [], False
    for c in spec.get('containers', []):
        r = c.get('resources') or {}
        rq, lm = r.get('requests') or {}, r.get('limits') or {}
        if rq or lm:
            any_set = True
        reqs.append(rq)
        lims.append(lm)
    if not any_set:
        return 'BestEffort'
    for rq, lm in zip(reqs, lims):
        for k in ('cpu', 'memory'):
            if k not in lm or lm.get(k) != rq.get(k, lm.get(k)):
                return 'Burstable'
    return 'Guaranteed'


def pod_requests(spec):
    """Effective requests {resource: float}: sum over containers, at least the
    largest init container (requests default to limits)."""
    total = {}
    for c in spec.get('containers', []):
        r = c.get('resources') or {}
        for k, v in dict(r.get('limits') or {}, **(r.get('requests') or {})).items():
            try:
                total[k] = total.get(k, 0.0) + parse_quantity(v)
            except ValueError:
                pass
    for c in spec.get('initContainers', []):
        r = c.get('resources') or {}
        for k, v in dict(r.get('limits') or {}, **(r.get('requests') or {})).items():
            try:
                total[k] = max(total.get(k, 0.0), parse_quantity(v))
            except ValueError:
                pass
    return total

# ------------------------------------------------------------------ validation


def validate_pod_spec(spec, path, causes, template=False):
    cs = spec.get('containers') or []
    if not cs:
        causes.append((path + '.containers', 'Required value', 'FieldValueRequired'))
    seen = set()
    allowed = ('OnFailure', 'Never') if template else ('Always', 'OnFailure', 'Never')
    rp = spec.get('restartPolicy')
    if template and not rp:
        causes.append((path + '.restartPolicy', 'Required value: valid values: "OnFailure", "Never"',
                       'FieldValueRequired'))
    elif rp and rp not in allowed:
        causes.append((path + '.restartPolicy', 'Unsupported value: "%s": supported values: %s'
                       % (rp, ', '.join('"%s"' % a for a in allowed)), 'FieldValueNotSupported'))
    vols = {v.get('name') for v in spec.get('volumes', [])}
    for kind in ('initContainers', 'containers'):
        for i, c in enumerate(spec.get(kind) or []):
            p = '%s.%s[%d]' % (path, kind, i)
            n = c.get('name', '')
            if not n:
                causes.append((p + '.name', 'Required value', 'FieldValueRequired'))
            elif name_errors('label', n):
                causes.append((p + '.name', 'Invalid value: "%s": %s' % (n, name_errors('label', n)[0]),
                               'FieldValueInvalid'))
            elif n in seen:
                causes.append((p + '.name', 'Duplicate value: "%s"' % n, 'FieldValueDuplicate'))
            seen.add(n)
            if not c.get('image'):
                causes.append((p + '.image', 'Required value', 'FieldValueRequired'))
            res = c.get('resources') or {}
            for k, v in list((res.get('requests') or {}).items()) + list((res.get('limits') or {}).items()):
                try:
                    parse_quantity(v)
                except ValueError as e:
                    causes.append((p + '.resources', 'Invalid value: "%s": %s' % (v, e), 'FieldValueInvalid'))
            lim = res.get('limits') or {}
            for k, v in (res.get('requests') or {}).items():
                if '/' in k and not k.startswith(('kubernetes.io/', 'requests.')):
                    if k not in lim:
                        causes.append((p + '.resources.limits', 'Required value: Limit must be set for non '
                                       'overcommitable resources', 'FieldValueRequired'))
                    elif str(lim[k]) != str(v):
                        causes.append(('%s.resources.requests[%s]' % (p, k), 'Invalid value: "%s": must be equal '
                                       'to %s limit of %s' % (v, k, lim[k]), 'FieldValueInvalid'))
            for j, m in enumerate(c.get('volumeMounts') or []):
                if m.get('name') not in vols:
                    causes.append(('%s.volumeMounts[%d].name' % (p, j), 'Not found: "%s"' % m.get('name'),
                                   'FieldValueNotFound'))
                if not m.get('mountPath', '').startswith('/'):
                    causes.append(('%s.volumeMounts[%d].mountPath' % (p, j), 'Invalid value: "%s": must be an '
                                   'absolute path' % m.get('mountPath', ''), 'FieldValueInvalid'))
    for f in ('hostname', 'subdomain'):
        if spec.get(f) and name_errors('label', spec[f]):
            causes.append(('%s.%s' % (path, f), 'Invalid value: "%s": %s' % (spec[f], name_errors('label', spec[f])[0]),
                           'FieldValueInvalid'))


def prepare_job(obj, causes):
    """The job strategy's defaulting and validation at create."""
    md, spec = obj['metadata'], obj.setdefault('spec', {})
    uid = md['uid']
    if spec.get('completions') is None and spec.get('parallelism') is None:
        spec['completions'] = 1
        spec['parallelism'] = 1
    spec.setdefault('parallelism', 1)
    spec.setdefault('completionMode', 'NonIndexed')
    spec.setdefault('backoffLimit', 2147483647 if spec.get('backoffLimitPerIndex') is not None else 6)
    spec.setdefault('suspend', False)
    spec.setdefault('podReplacementPolicy', 'Failed' if spec.get('podFailurePolicy') else 'TerminatingOrFailed')
    tmpl = spec.setdefault('template', {})
    tmd = tmpl.setdefault('metadata', {})
    labels = tmd.setdefault('labels', {})
    if not spec.get('manualSelector'):
        for k, v in (('batch.kubernetes.io/controller-uid', uid), ('batch.kubernetes.io/job-name', md['name']),
                     ('controller-uid', uid), ('job-name', md['name'])):
            labels[k] = v
        spec['selector'] = {'matchLabels': {'batch.kubernetes.io/controller-uid': uid}}
    elif not spec.get('selector'):
        causes.append(('spec.selector', 'Required value', 'FieldValueRequired'))
    default_pod_spec(tmpl.setdefault('spec', {}), template=True)
    validate_pod_spec(tmpl['spec'], 'spec.template.spec', causes, template=True)
    if spec.get('completionMode') not in ('NonIndexed', 'Indexed'):
        causes.append(('spec.completionMode', 'Unsupported value: "%s": supported values: "NonIndexed", "Indexed"'
                       % spec.get('completionMode'), 'FieldValueNotSupported'))
    if spec.get('completionMode') == 'Indexed' and spec.get('completions') is None:
        causes.append(('spec.completions', 'Required value: when completion mode is Indexed',
                       'FieldValueRequired'))
    for f in ('parallelism', 'completions', 'backoffLimit', 'activeDeadlineSeconds', 'ttlSecondsAfterFinished'):
        if spec.get(f) is not None and spec[f] < (1 if f == 'activeDeadlineSeconds' else 0):
            causes.append(('spec.' + f, 'Invalid value: %d: must be greater than%s 0'
                           % (spec[f], '' if f == 'activeDeadlineSeconds' else ' than or equal to'),
                           'FieldValueInvalid'))
    obj['status'] = {}


MAX_CONFIG_MAP_BYTES = 1024 * 1024   # the apiserver's MaxSecretSize, ConfigMaps' too


def validate_config_map(obj, causes):
    """As the apiserver's ValidateConfigMap: binaryData holds base64, no key in
    both data and binaryData, and the keys and values together at most 1 MiB."""
    import base64
    import binascii
    data, binary = obj.get('data') or {}, obj.get('binaryData') or {}
    total = sum(len(k) + len(v.encode()) for k, v in data.items())
    for k, v in binary.items():
        if k in data:
            causes.append(('binaryData[%s]' % k, 'Duplicate value: "%s"' % k, 'FieldValueDuplicate'))
        try:
            total += len(k) + len(base64.b64decode(v, validate=True))
        except (binascii.Error, ValueError, TypeError):
            raise bad_request('json: cannot unmarshal binaryData["%s"]: illegal base64 data' % k)
    if total > MAX_CONFIG_MAP_BYTES:
        causes.append(('[]', 'Too long: must have at most %d bytes' % MAX_CONFIG_MAP_BYTES, 'FieldValueTooLong'))


def prepare_create(store, res, ns, obj, cfg):
    """Everything the apiserver does to a new object of RES (lock held)."""
    r = RESOURCES[res]
    fill_metadata(store, res, ns, obj)
    causes = []
    md = obj['metadata']
    if res == 'pods':
        default_pod_spec(obj.setdefault('spec', {}))
        if cfg.get('extended_resource_toleration', True):
            add_extended_resource_tolerations(obj['spec'])
        validate_pod_spec(obj['spec'], 'spec', causes)
        obj['status'] = {'phase': 'Pending', 'qosClass': qos_class(obj['spec'])}
    elif res == 'jobs':
        prepare_job(obj, causes)
    elif res == 'services':
        spec = obj.setdefault('spec', {})
        spec.setdefault('type', 'ClusterIP')
        spec.setdefault('sessionAffinity', 'None')
        if spec.get('clusterIP') in (None, ''):
            n = store.next_service_ip()
            spec['clusterIP'] = '10.96.%d.%d' % (n // 250, n % 250 + 2)
        spec['clusterIPs'] = [spec['clusterIP']]
        spec.setdefault('ipFamilies', ['IPv4'])
        spec.setdefault('ipFamilyPolicy', 'SingleStack')
        spec.setdefault('internalTrafficPolicy', 'Cluster')
        for p in spec.get('ports', []):
            p.setdefault('protocol', 'TCP')
            p.setdefault('targetPort', p.get('port'))
        obj['status'] = {'loadBalancer': {}}
    elif res == 'namespaces':
        md.setdefault('labels', {})['kubernetes.io/metadata.name'] = md['name']
        obj['spec'] = {'finalizers': ['kubernetes']}
        obj['status'] = {'phase': 'Active'}
    elif res == 'configmaps':
        validate_config_map(obj, causes)
    elif res == 'secrets':
        obj.setdefault('type', 'Opaque')
        sd = obj.pop('stringData', None)
        if sd:
            import base64
            obj.setdefault('data', {}).update({k: base64.b64encode(v.encode()).decode() for k, v in sd.items()})
    if causes:
        raise invalid(r, md['name'], causes)
    return obj


IMMUTABLE_JOB = ('template', 'selector', 'completionMode', 'completions', 'manualSelector', 'podFailurePolicy')


def validate_update(res, old, new):
    """Checks an update of OLD into NEW (both with metadata); raises 422."""
    r = RESOURCES[res]
    causes = []
    for f in ('name', 'namespace', 'uid', 'creationTimestamp'):
        if new['metadata'].get(f) != old['metadata'].get(f) and f != 'creationTimestamp':
            causes.append(('metadata.' + f, 'Invalid value: "%s": field is immutable' % new['metadata'].get(f),
                           'FieldValueInvalid'))
    if res == 'jobs':
        os_, ns_ = old.get('spec', {}), new.get('spec', {})
        for f in IMMUTABLE_JOB:
            if f == 'completions' and os_.get('completionMode') != 'Indexed':
                if os_.get('completions') != ns_.get('completions') and not old.get('spec', {}).get('suspend'):
                    causes.append(('spec.completions', 'Invalid value: %s: field is immutable'
                                   % ns_.get('completions'), 'FieldValueInvalid'))
                continue
            if f == 'template' and os_.get('suspend'):
                continue
            if os_.get(f) != ns_.get(f):
                causes.append(('spec.' + f, 'Invalid value: %s: field is immutable' % (
                    '"%s"' % ns_.get(f) if isinstance(ns_.get(f), str) else 'core.PodTemplateSpec{...}'
                    if f == 'template' else ns_.get(f)), 'FieldValueInvalid'))
    elif res == 'configmaps':
        validate_config_map(new, causes)
    elif res == 'pods':
        os_, ns_ = dict(old.get('spec', {})), dict(new.get('spec', {}))
        for s in (os_, ns_):
            s.pop('activeDeadlineSeconds', None)
            s.pop('tolerations', None)
            s['containers'] = [{k: v for k, v in c.items() if k != 'image'} for c in s.get('containers', [])]
        if old['spec'].get('nodeName') and new['spec'].get('nodeName') != old['spec'].get('nodeName'):
            causes.append(('spec.nodeName', 'Forbidden: pod updates may not change fields other than '
                           '`spec.containers[*].image`, `spec.initContainers[*].image`, '
                           '`spec.activeDeadlineSeconds`, `spec.tolerations` (only additions to existing '
                           'tolerations), `spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it '
                           'was previously negative)', 'FieldValueForbidden'))
        elif os_ != ns_ and not (not old['spec'].get('nodeName') and
                                 {k: v for k, v in os_.items() if k != 'nodeName'} ==
                                 {k: v for k, v in ns_.items() if k != 'nodeName'}):
            causes.append(('spec', 'Forbidden: pod updates may not change fields other than '
                           '`spec.containers[*].image`, `spec.initContainers[*].image`, '
                           '`spec.activeDeadlineSeconds`, `spec.tolerations` (only additions to existing '
                           'tolerations), `spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it '
                           'was previously negative)', 'FieldValueForbidden'))
    if causes:
        raise invalid(r, new['metadata'].get('name'), causes)


def unsupported_media(ct):
    return ApiError(415, 'UnsupportedMediaType', 'the body of the request was in an unknown format - accepted '
                    'media types include: application/json-patch+json, application/merge-patch+json, '
                    'application/apply-patch+yaml' if ct else 'the body of the request was in an unknown format',
                    {})


def add_extended_resource_tolerations(spec):
    """The ExtendedResourceToleration admission plugin (GKE enables it): a pod
    that requests an extended resource tolerates the taint of that name."""
    names = set()
    for c in spec.get('containers', []) + spec.get('initContainers', []):
        r = c.get('resources') or {}
        for k in list((r.get('requests') or {})) + list((r.get('limits') or {})):
            if '/' in k and not k.startswith(('kubernetes.io/', 'requests.', 'hugepages-')):
                names.add(k)
    tol = spec.setdefault('tolerations', [])
    for n in sorted(names):
        t = {'key': n, 'operator': 'Exists', 'effect': 'NoSchedule'}
        if t not in tol:
            tol.append(t)
