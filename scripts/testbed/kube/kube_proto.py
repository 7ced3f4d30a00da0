# Decoding of the Kubernetes protobuf wire format ("k8s\0" + runtime.Unknown)
# for the request bodies kubectl's typed clients send (kubectl create
# namespace / configmap / secret / job, DeleteOptions). Responses stay JSON:
# those clients accept it. Field numbers are those of the generated.proto
# files of k8s.io/api and k8s.io/apimachinery. Go's marshaller writes every
# non-pointer field, so zero values of non-pointer fields are dropped (as
# Go's JSON omitempty would); pointer fields ('*') keep their zero values.
import base64
import time

MAGIC = b'k8s\x00'

# message -> {field number: (json name, type)}; type: s string, i varint, b
# bool, y bytes (base64 in JSON), t Time, q Quantity, ms/my/mq maps of
# string/bytes/quantity, [X] repeated X, other names are messages; a
# trailing '*' marks a pointer field.
MSGS = {
    'Unknown': {1: ('typeMeta', 'TypeMeta'), 2: ('raw', 'y'), 3: ('contentEncoding', 's'),
                4: ('contentType', 's')},
    'TypeMeta': {1: ('apiVersion', 's'), 2: ('kind', 's')},
    'ObjectMeta': {1: ('name', 's'), 2: ('generateName', 's'), 3: ('namespace', 's'), 4: ('selfLink', 's'),
                   5: ('uid', 's'), 6: ('resourceVersion', 's'), 7: ('generation', 'i'),
                   8: ('creationTimestamp', 't'), 9: ('deletionTimestamp', 't'),
                   10: ('deletionGracePeriodSeconds', 'i*'), 11: ('labels', 'ms'), 12: ('annotations', 'ms'),
                   13: ('ownerReferences', ['OwnerReference']), 14: ('finalizers', ['s'])},
    'OwnerReference': {1: ('kind', 's'), 3: ('name', 's'), 4: ('uid', 's'), 5: ('apiVersion', 's'),
                       6: ('controller', 'b*'), 7: ('blockOwnerDeletion', 'b*')},
    'Namespace': {1: ('metadata', 'ObjectMeta'), 2: ('spec', 'NamespaceSpec')},
    'NamespaceSpec': {1: ('finalizers', ['s'])},
    'ConfigMap': {1: ('metadata', 'ObjectMeta'), 2: ('data', 'ms'), 3: ('binaryData', 'my'), 4: ('immutable', 'b*')},
    'Secret': {1: ('metadata', 'ObjectMeta'), 2: ('data', 'my'), 3: ('type', 's'), 4: ('stringData', 'ms'),
               5: ('immutable', 'b*')},
    'Job': {1: ('metadata', 'ObjectMeta'), 2: ('spec', 'JobSpec')},
    'JobSpec': {1: ('parallelism', 'i*'), 2: ('completions', 'i*'), 3: ('activeDeadlineSeconds', 'i*'),
                4: ('selector', 'LabelSelector'), 5: ('manualSelector', 'b*'), 6: ('template', 'PodTemplateSpec'),
                7: ('backoffLimit', 'i*'), 8: ('ttlSecondsAfterFinished', 'i*'), 9: ('completionMode', 's*'),
                10: ('suspend', 'b*'), 12: ('backoffLimitPerIndex', 'i*'), 13: ('maxFailedIndexes', 'i*'),
                14: ('podReplacementPolicy', 's*'), 15: ('managedBy', 's*')},
    'LabelSelector': {1: ('matchLabels', 'ms'), 2: ('matchExpressions', ['LabelSelectorRequirement'])},
    'LabelSelectorRequirement': {1: ('key', 's'), 2: ('operator', 's'), 3: ('values', ['s'])},
    'PodTemplateSpec': {1: ('metadata', 'ObjectMeta'), 2: ('spec', 'PodSpec')},
    'PodSpec': {2: ('containers', ['Container']), 3: ('restartPolicy', 's'),
                4: ('terminationGracePeriodSeconds', 'i*'), 5: ('activeDeadlineSeconds', 'i*'), 6: ('dnsPolicy', 's'),
                7: ('nodeSelector', 'ms'), 8: ('serviceAccountName', 's'), 9: ('serviceAccount', 's'),
                10: ('nodeName', 's'), 11: ('hostNetwork', 'b'), 16: ('hostname', 's'), 17: ('subdomain', 's'),
                19: ('schedulerName', 's'), 20: ('initContainers', ['Container']), 22: ('tolerations', ['Toleration']),
                24: ('priorityClassName', 's'), 25: ('priority', 'i*'), 30: ('enableServiceLinks', 'b*')},
    'Container': {1: ('name', 's'), 2: ('image', 's'), 3: ('command', ['s']), 4: ('args', ['s']),
                  5: ('workingDir', 's'), 6: ('ports', ['ContainerPort']), 7: ('env', ['EnvVar']),
                  8: ('resources', 'ResourceRequirements'), 13: ('terminationMessagePath', 's'),
                  14: ('imagePullPolicy', 's'), 16: ('stdin', 'b'), 17: ('stdinOnce', 'b'), 18: ('tty', 'b'),
                  20: ('terminationMessagePolicy', 's')},
    'ContainerPort': {1: ('name', 's'), 2: ('hostPort', 'i'), 3: ('containerPort', 'i'), 4: ('protocol', 's'),
                      5: ('hostIP', 's')},
    'EnvVar': {1: ('name', 's'), 2: ('value', 's')},
    'ResourceRequirements': {1: ('limits', 'mq'), 2: ('requests', 'mq')},
    'Toleration': {1: ('key', 's'), 2: ('operator', 's'), 3: ('value', 's'), 4: ('effect', 's'),
                   5: ('tolerationSeconds', 'i*')},
    'DeleteOptions': {1: ('gracePeriodSeconds', 'i*'), 2: ('preconditions', 'Preconditions'),
                      3: ('orphanDependents', 'b*'), 4: ('propagationPolicy', 's*'), 5: ('dryRun', ['s'])},
    'Preconditions': {1: ('uid', 's*'), 2: ('resourceVersion', 's*')},
}
KIND_MSG = {'Namespace': 'Namespace', 'ConfigMap': 'ConfigMap', 'Secret': 'Secret', 'Job': 'Job',
            'DeleteOptions': 'DeleteOptions'}


class ProtoError(ValueError):
    pass


def _varint(buf, i):
    shift = val = 0
    while True:
        if i >= len(buf):
            raise ProtoError('truncated varint')
        b = buf[i]
        i += 1
        val |= (b & 0x7f) << shift
        if b < 0x80:
            return val, i
        shift += 7


def _fields(buf):
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(buf, i)
        elif wt == 2:
            n, i = _varint(buf, i)
            v, i = buf[i:i + n], i + n
        elif wt == 1:
            v, i = buf[i:i + 8], i + 8
        elif wt == 5:
            v, i = buf[i:i + 4], i + 4
        else:
            raise ProtoError('unsupported wire type %d' % wt)
        yield num, v


def _time(buf):
    secs = 0
    for num, v in _fields(buf):
        if num == 1:
            secs = v
    return time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(secs)) if secs else None


def _scalar(typ, v):
    if typ == 's':
        return bytes(v).decode()
    if typ == 'i':
        return v - (1 << 64) if v >= 1 << 63 else v
    if typ == 'b':
        return bool(v)
    if typ == 'y':
        return base64.b64encode(bytes(v)).decode()
    if typ == 't':
        return _time(v)
    if typ == 'q':
        return next((bytes(x).decode() for n, x in _fields(v) if n == 1), '0')
    return decode_message(typ, v)


def _zero(v):
    return v in ('', 0, False, None) or v == {} or v == []


def decode_message(name, buf):
    table, out = MSGS[name], {}
    for num, v in _fields(buf):
        if num not in table:
            continue
        key, typ = table[num]
        if isinstance(typ, list):
            out.setdefault(key, []).append(_scalar(typ[0], v))
        elif typ in ('ms', 'my', 'mq'):
            k = val = None
            for n, x in _fields(v):
                if n == 1:
                    k = bytes(x).decode()
                elif n == 2:
                    val = x
            out.setdefault(key, {})[k] = _scalar({'ms': 's', 'my': 'y', 'mq': 'q'}[typ], val or b'')
        else:
            ptr = typ.endswith('*')
            val = _scalar(typ.rstrip('*'), v)
            if ptr or not _zero(val):
                out[key] = val
    return out


def decode(body):
    """A protobuf request body as the JSON object the apiserver would see."""
    if not body.startswith(MAGIC):
        raise ProtoError('missing the k8s protobuf prefix')
    unk = decode_message('Unknown', body[len(MAGIC):])
    tm = unk.get('typeMeta', {})
    kind = tm.get('kind', '')
    if kind not in KIND_MSG:
        raise ProtoError('the protobuf encoding of %s is not supported by the kappa fake API server; send JSON'
                         % (kind or 'this object'))
    obj = decode_message(KIND_MSG[kind], base64.b64decode(unk.get('raw', '')))
    if kind != 'DeleteOptions':
        obj = dict({'apiVersion': tm.get('apiVersion', 'v1'), 'kind': kind}, **obj)
    return obj
