# Field tables of the Kubernetes objects the fake API server knows, used for
# three things: strict decoding (unknown fields -> the real apiserver's
# "strict decoding error: unknown field ..."), pruning of unknown fields
# (fieldValidation Warn/Ignore drop them, as Go's decoder does), and the
# OpenAPI v3 documents that kubectl reads (validation, explain, apply).
#
# Type codes: 's' string, 'i' integer, 'l' int64, 'b' boolean, 'n' number,
# 't' time (RFC 3339 string), 'q' quantity (string or number), 'is'
# int-or-string, 'a' anything (accepted opaque, not checked), 'ms' map of
# strings, 'mq' map of quantities; ['X'] a list of X; any other string names a
# struct of STRUCTS.

STRUCTS = {
    # ---------------------------------------------------------------- meta/v1
    'ObjectMeta': {
        'name': 's', 'generateName': 's', 'namespace': 's', 'selfLink': 's', 'uid': 's',
        'resourceVersion': 's', 'generation': 'l', 'creationTimestamp': 't', 'deletionTimestamp': 't',
        'deletionGracePeriodSeconds': 'l', 'labels': 'ms', 'annotations': 'ms',
        'ownerReferences': ['OwnerReference'], 'finalizers': ['s'], 'managedFields': ['a'],
    },
    'OwnerReference': {'apiVersion': 's', 'kind': 's', 'name': 's', 'uid': 's', 'controller': 'b',
                       'blockOwnerDeletion': 'b'},
    'LabelSelector': {'matchLabels': 'ms', 'matchExpressions': ['LabelSelectorRequirement']},
    'LabelSelectorRequirement': {'key': 's', 'operator': 's', 'values': ['s']},
    'Preconditions': {'uid': 's', 'resourceVersion': 's'},
    'DeleteOptions': {'kind': 's', 'apiVersion': 's', 'gracePeriodSeconds': 'l', 'preconditions': 'Preconditions',
                      'orphanDependents': 'b', 'propagationPolicy': 's', 'dryRun': ['s'],
                      'ignoreStoreReadErrorWithClusterBreakingPotential': 'b'},
    # ---------------------------------------------------------------- batch/v1
    'Job': {'apiVersion': 's', 'kind': 's', 'metadata': 'ObjectMeta', 'spec': 'JobSpec', 'status': 'JobStatus'},
    'JobSpec': {
        'parallelism': 'i', 'completions': 'i', 'activeDeadlineSeconds': 'l', 'podFailurePolicy': 'PodFailurePolicy',
        'successPolicy': 'a', 'backoffLimit': 'i', 'backoffLimitPerIndex': 'i', 'maxFailedIndexes': 'i',
        'selector': 'LabelSelector', 'manualSelector': 'b', 'template': 'PodTemplateSpec',
        'ttlSecondsAfterFinished': 'i', 'completionMode': 's', 'suspend': 'b', 'podReplacementPolicy': 's',
        'managedBy': 's',
    },
    'PodFailurePolicy': {'rules': ['PodFailurePolicyRule']},
    'PodFailurePolicyRule': {'action': 's', 'onExitCodes': 'PodFailurePolicyOnExitCodesRequirement',
                             'onPodConditions': ['PodFailurePolicyOnPodConditionsPattern']},
    'PodFailurePolicyOnExitCodesRequirement': {'containerName': 's', 'operator': 's', 'values': ['i']},
    'PodFailurePolicyOnPodConditionsPattern': {'type': 's', 'status': 's'},
    'JobStatus': {'conditions': ['JobCondition'], 'startTime': 't', 'completionTime': 't', 'active': 'i',
                  'succeeded': 'i', 'failed': 'i', 'terminating': 'i', 'completedIndexes': 's',
                  'failedIndexes': 's', 'uncountedTerminatedPods': 'a', 'ready': 'i'},
    'JobCondition': {'type': 's', 'status': 's', 'lastProbeTime': 't', 'lastTransitionTime': 't', 'reason': 's',
                     'message': 's'},
    # ---------------------------------------------------------------- core/v1
    'PodTemplateSpec': {'metadata': 'ObjectMeta', 'spec': 'PodSpec'},
    'Pod': {'apiVersion': 's', 'kind': 's', 'metadata': 'ObjectMeta', 'spec': 'PodSpec', 'status': 'a'},
    'PodSpec': {
        'volumes': ['Volume'], 'initContainers': ['Container'], 'containers': ['Container'],
        'ephemeralContainers': ['a'], 'restartPolicy': 's', 'terminationGracePeriodSeconds': 'l',
        'activeDeadlineSeconds': 'l', 'dnsPolicy': 's', 'nodeSelector': 'ms', 'serviceAccountName': 's',
        'serviceAccount': 's', 'automountServiceAccountToken': 'b', 'nodeName': 's', 'hostNetwork': 'b',
        'hostPID': 'b', 'hostIPC': 'b', 'shareProcessNamespace': 'b', 'securityContext': 'a',
        'imagePullSecrets': ['a'], 'hostname': 's', 'subdomain': 's', 'affinity': 'a', 'schedulerName': 's',
        'tolerations': ['Toleration'], 'hostAliases': ['HostAlias'], 'priorityClassName': 's', 'priority': 'i',
        'dnsConfig': 'a', 'readinessGates': ['a'], 'runtimeClassName': 's', 'enableServiceLinks': 'b',
        'preemptionPolicy': 's', 'overhead': 'mq', 'topologySpreadConstraints': ['a'], 'setHostnameAsFQDN': 'b',
        'os': 'a', 'hostUsers': 'b', 'schedulingGates': ['a'], 'resourceClaims': ['a'], 'resources': 'a',
    },
    'HostAlias': {'ip': 's', 'hostnames': ['s']},
    'Toleration': {'key': 's', 'operator': 's', 'value': 's', 'effect': 's', 'tolerationSeconds': 'l'},
    'Container': {
        'name': 's', 'image': 's', 'command': ['s'], 'args': ['s'], 'workingDir': 's', 'ports': ['ContainerPort'],
        'envFrom': ['EnvFromSource'], 'env': ['EnvVar'], 'resources': 'ResourceRequirements', 'resizePolicy': ['a'],
        'restartPolicy': 's', 'volumeMounts': ['VolumeMount'], 'volumeDevices': ['a'], 'livenessProbe': 'a',
        'readinessProbe': 'a', 'startupProbe': 'a', 'lifecycle': 'a', 'terminationMessagePath': 's',
        'terminationMessagePolicy': 's', 'imagePullPolicy': 's', 'securityContext': 'a', 'stdin': 'b',
        'stdinOnce': 'b', 'tty': 'b',
    },
    'ContainerPort': {'name': 's', 'hostPort': 'i', 'containerPort': 'i', 'protocol': 's', 'hostIP': 's'},
    'EnvVar': {'name': 's', 'value': 's', 'valueFrom': 'EnvVarSource'},
    'EnvVarSource': {'fieldRef': 'ObjectFieldSelector', 'resourceFieldRef': 'ResourceFieldSelector',
                     'configMapKeyRef': 'ConfigMapKeySelector', 'secretKeyRef': 'SecretKeySelector'},
    'ObjectFieldSelector': {'apiVersion': 's', 'fieldPath': 's'},
    'ResourceFieldSelector': {'containerName': 's', 'resource': 's', 'divisor': 'q'},
    'ConfigMapKeySelector': {'name': 's', 'key': 's', 'optional': 'b'},
    'SecretKeySelector': {'name': 's', 'key': 's', 'optional': 'b'},
    'EnvFromSource': {'prefix': 's', 'configMapRef': 'ConfigMapEnvSource', 'secretRef': 'SecretEnvSource'},
    'ConfigMapEnvSource': {'name': 's', 'optional': 'b'},
    'SecretEnvSource': {'name': 's', 'optional': 'b'},
    'ResourceRequirements': {'limits': 'mq', 'requests': 'mq', 'claims': ['a']},
    'VolumeMount': {'name': 's', 'readOnly': 'b', 'recursiveReadOnly': 's', 'mountPath': 's', 'subPath': 's',
                    'mountPropagation': 's', 'subPathExpr': 's'},
    'Volume': {'name': 's', 'hostPath': 'HostPathVolumeSource', 'emptyDir': 'EmptyDirVolumeSource',
               'secret': 'SecretVolumeSource', 'configMap': 'ConfigMapVolumeSource',
               'downwardAPI': 'DownwardAPIVolumeSource', 'projected': 'ProjectedVolumeSource',
               'persistentVolumeClaim': 'a', 'nfs': 'a', 'csi': 'a', 'ephemeral': 'a', 'image': 'a'},
    'HostPathVolumeSource': {'path': 's', 'type': 's'},
    'EmptyDirVolumeSource': {'medium': 's', 'sizeLimit': 'q'},
    'SecretVolumeSource': {'secretName': 's', 'items': ['KeyToPath'], 'defaultMode': 'i', 'optional': 'b'},
    'ConfigMapVolumeSource': {'name': 's', 'items': ['KeyToPath'], 'defaultMode': 'i', 'optional': 'b'},
    'KeyToPath': {'key': 's', 'path': 's', 'mode': 'i'},
    'DownwardAPIVolumeSource': {'items': ['DownwardAPIVolumeFile'], 'defaultMode': 'i'},
    'DownwardAPIVolumeFile': {'path': 's', 'fieldRef': 'ObjectFieldSelector',
                              'resourceFieldRef': 'ResourceFieldSelector', 'mode': 'i'},
    'ProjectedVolumeSource': {'sources': ['VolumeProjection'], 'defaultMode': 'i'},
    'VolumeProjection': {'secret': 'SecretProjection', 'configMap': 'ConfigMapProjection',
                         'downwardAPI': 'DownwardAPIProjection', 'serviceAccountToken': 'a',
                         'clusterTrustBundle': 'a'},
    'SecretProjection': {'name': 's', 'items': ['KeyToPath'], 'optional': 'b'},
    'ConfigMapProjection': {'name': 's', 'items': ['KeyToPath'], 'optional': 'b'},
    'DownwardAPIProjection': {'items': ['DownwardAPIVolumeFile']},
    'Service': {'apiVersion': 's', 'kind': 's', 'metadata': 'ObjectMeta', 'spec': 'ServiceSpec', 'status': 'a'},
    'ServiceSpec': {
        'ports': ['ServicePort'], 'selector': 'ms', 'clusterIP': 's', 'clusterIPs': ['s'], 'type': 's',
        'externalIPs': ['s'], 'sessionAffinity': 's', 'loadBalancerIP': 's', 'loadBalancerSourceRanges': ['s'],
        'externalName': 's', 'externalTrafficPolicy': 's', 'healthCheckNodePort': 'i',
        'publishNotReadyAddresses': 'b', 'sessionAffinityConfig': 'a', 'ipFamilies': ['s'], 'ipFamilyPolicy': 's',
        'allocateLoadBalancerNodePorts': 'b', 'loadBalancerClass': 's', 'internalTrafficPolicy': 's',
        'trafficDistribution': 's',
    },
    'ServicePort': {'name': 's', 'protocol': 's', 'appProtocol': 's', 'port': 'i', 'targetPort': 'is',
                    'nodePort': 'i'},
    'ConfigMap': {'apiVersion': 's', 'kind': 's', 'metadata': 'ObjectMeta', 'immutable': 'b', 'data': 'ms',
                  'binaryData': 'ms'},
    'Secret': {'apiVersion': 's', 'kind': 's', 'metadata': 'ObjectMeta', 'immutable': 'b', 'data': 'ms',
               'stringData': 'ms', 'type': 's'},
    'Namespace': {'apiVersion': 's', 'kind': 's', 'metadata': 'ObjectMeta', 'spec': 'NamespaceSpec', 'status': 'a'},
    'NamespaceSpec': {'finalizers': ['s']},
    'Node': {'apiVersion': 's', 'kind': 's', 'metadata': 'ObjectMeta', 'spec': 'NodeSpec', 'status': 'a'},
    'NodeSpec': {'podCIDR': 's', 'podCIDRs': ['s'], 'providerID': 's', 'unschedulable': 'b', 'taints': ['Taint'],
                 'configSource': 'a', 'externalID': 's'},
    'Taint': {'key': 's', 'value': 's', 'effect': 's', 'timeAdded': 't'},
    'Event': {'apiVersion': 's', 'kind': 's', 'metadata': 'ObjectMeta', 'involvedObject': 'ObjectReference',
              'reason': 's', 'message': 's', 'source': 'EventSource', 'firstTimestamp': 't', 'lastTimestamp': 't',
              'count': 'i', 'type': 's', 'eventTime': 't', 'series': 'a', 'action': 's', 'related': 'a',
              'reportingComponent': 's', 'reportingInstance': 's'},
    'EventSource': {'component': 's', 'host': 's'},
    'ObjectReference': {'kind': 's', 'namespace': 's', 'name': 's', 'uid': 's', 'apiVersion': 's',
                        'resourceVersion': 's', 'fieldPath': 's'},
    'Eviction': {'apiVersion': 's', 'kind': 's', 'metadata': 'ObjectMeta', 'deleteOptions': 'DeleteOptions'},
}

META_STRUCTS = {'ObjectMeta', 'OwnerReference', 'LabelSelector', 'LabelSelectorRequirement', 'Preconditions',
                'DeleteOptions'}
BATCH_STRUCTS = {'Job', 'JobSpec', 'JobStatus', 'JobCondition', 'PodFailurePolicy', 'PodFailurePolicyRule',
                 'PodFailurePolicyOnExitCodesRequirement', 'PodFailurePolicyOnPodConditionsPattern'}


def go_struct(name):
    """The Go type name used in decode errors (JobSpec, PodSpec...)."""
    return name


class DecodeError(Exception):
    """A type mismatch: the real server answers 400 with Go's json message."""


def _json_kind(v):
    if isinstance(v, bool):
        return 'bool'
    if isinstance(v, (int, float)):
        return 'number'
    if isinstance(v, str):
        return 'string'
    if isinstance(v, list):
        return 'array'
    if isinstance(v, dict):
        return 'object'
    return 'null'


_GO_TYPES = {'s': 'string', 'i': 'int32', 'l': 'int64', 'b': 'bool', 'n': 'float64', 't': 'v1.Time',
             'q': 'resource.Quantity', 'is': 'intstr.IntOrString', 'ms': 'map[string]string',
             'mq': 'v1.ResourceList'}


def _type_error(v, owner, path, typ):
    gotype = _GO_TYPES.get(typ) if isinstance(typ, str) else None
    if gotype is None:
        gotype = '[]' + str(typ[0]) if isinstance(typ, list) else 'v1.' + str(typ)
    raise DecodeError('json: cannot unmarshal %s into Go struct field %s.%s of type %s'
                      % (_json_kind(v), owner, path, gotype))


def decode(struct, obj, path='', owner=None, unknown=None):
    """Checks OBJ against STRUCT: returns a copy without unknown fields and
    null values; appends the paths of unknown fields to UNKNOWN; raises
    DecodeError on a type mismatch."""
    if unknown is None:
        unknown = []
    owner = owner or struct
    fields = STRUCTS[struct]
    if not isinstance(obj, dict):
        _type_error(obj, owner, path or struct, struct)
    out = {}
    for k, v in obj.items():
        p = (path + '.' + k) if path else k
        t = fields.get(k)
        if t is None:
            unknown.append(p)
            continue
        if v is None:
            continue
        out[k] = _decode_value(t, v, p, struct, unknown)
    return out


def _decode_value(t, v, p, owner, unknown):
    if isinstance(t, list):
        if not isinstance(v, list):
            _type_error(v, owner, p, t)
        return [_decode_value(t[0], x, '%s[%d]' % (p, i), owner, unknown) for i, x in enumerate(v) if x is not None]
    if t == 'a':
        return v
    if t in ('s', 't'):
        if not isinstance(v, str):
            _type_error(v, owner, p, t)
        return v
    if t in ('i', 'l'):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or (isinstance(v, float) and v != int(v)):
            _type_error(v, owner, p, t)
        return int(v)
    if t == 'n':
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            _type_error(v, owner, p, t)
        return v
    if t == 'b':
        if not isinstance(v, bool):
            _type_error(v, owner, p, t)
        return v
    if t == 'q':
        if isinstance(v, bool) or not isinstance(v, (int, float, str)):
            _type_error(v, owner, p, t)
        return v if isinstance(v, str) else (str(int(v)) if v == int(v) else str(v))
    if t == 'is':
        if isinstance(v, bool) or not isinstance(v, (int, str)):
            _type_error(v, owner, p, t)
        return v
    if t in ('ms', 'mq'):
        if not isinstance(v, dict):
            _type_error(v, owner, p, t)
        out = {}
        for k, x in v.items():
            if x is None:
                continue
            out[k] = _decode_value('s' if t == 'ms' else 'q', x, p + '.' + k, owner, unknown)
        return out
    return decode(t, v, p, t, unknown)


# ------------------------------------------------------------------ OpenAPI v3

def schema_name(struct):
    if struct in META_STRUCTS:
        return 'io.k8s.apimachinery.pkg.apis.meta.v1.' + struct
    if struct in BATCH_STRUCTS:
        return 'io.k8s.api.batch.v1.' + struct
    if struct == 'Eviction':
        return 'io.k8s.api.policy.v1.Eviction'
    return 'io.k8s.api.core.v1.' + struct


def _ref(struct):
    return {'allOf': [{'$ref': '#/components/schemas/' + schema_name(struct)}], 'default': {}}


def _type_schema(t):
    if isinstance(t, list):
        return {'type': 'array', 'items': _type_schema(t[0]) if t[0] not in STRUCTS else
                {'default': {}, 'allOf': [{'$ref': '#/components/schemas/' + schema_name(t[0])}]}}
    if t == 's':
        return {'type': 'string', 'default': ''}
    if t == 't':
        return {'$ref': '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Time'}
    if t == 'i':
        return {'type': 'integer', 'format': 'int32'}
    if t == 'l':
        return {'type': 'integer', 'format': 'int64'}
    if t == 'n':
        return {'type': 'number', 'format': 'double'}
    if t == 'b':
        return {'type': 'boolean'}
    if t == 'q':
        return {'$ref': '#/components/schemas/io.k8s.apimachinery.pkg.api.resource.Quantity'}
    if t == 'is':
        return {'$ref': '#/components/schemas/io.k8s.apimachinery.pkg.util.intstr.IntOrString'}
    if t == 'ms':
        return {'type': 'object', 'additionalProperties': {'type': 'string', 'default': ''}}
    if t == 'mq':
        return {'type': 'object', 'additionalProperties':
                {'$ref': '#/components/schemas/io.k8s.apimachinery.pkg.api.resource.Quantity'}}
    if t == 'a':
        return {'type': 'object', 'x-kubernetes-preserve-unknown-fields': True}
    return _ref(t)


# GVK of the top-level kinds, for x-kubernetes-group-version-kind.
TOP_KINDS = {'Job': ('batch', 'v1'), 'Pod': ('', 'v1'), 'Service': ('', 'v1'), 'ConfigMap': ('', 'v1'),
             'Secret': ('', 'v1'), 'Namespace': ('', 'v1'), 'Node': ('', 'v1'), 'Event': ('', 'v1'),
             'DeleteOptions': ('', 'v1'), 'Eviction': ('policy', 'v1')}


def component_schemas():
    out = {}
    for name, fields in STRUCTS.items():
        props = {k: _type_schema(t) for k, t in sorted(fields.items())}
        sch = {'description': 'The %s fields known to the skyslurm fake API server.' % name,
               'type': 'object', 'properties': props}
        if name in TOP_KINDS:
            g, v = TOP_KINDS[name]
            sch['x-kubernetes-group-version-kind'] = [{'group': g, 'kind': name, 'version': v}]
        out[schema_name(name)] = sch
        if name in TOP_KINDS and name not in ('DeleteOptions', 'Eviction'):
            g, v = TOP_KINDS[name]
            lname = schema_name(name) + 'List'
            out[lname] = {'type': 'object', 'required': ['items'], 'properties': {
                'apiVersion': {'type': 'string'}, 'kind': {'type': 'string'},
                'items': {'type': 'array', 'items': {'default': {}, 'allOf': [
                    {'$ref': '#/components/schemas/' + schema_name(name)}]}},
                'metadata': {'default': {}, 'allOf': [
                    {'$ref': '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta'}]}},
                'x-kubernetes-group-version-kind': [{'group': g, 'kind': name + 'List', 'version': v}]}
    out['io.k8s.apimachinery.pkg.apis.meta.v1.Time'] = {'type': 'string', 'format': 'date-time'}
    out['io.k8s.apimachinery.pkg.api.resource.Quantity'] = {'type': 'string'}
    out['io.k8s.apimachinery.pkg.util.intstr.IntOrString'] = {'type': 'string', 'format': 'int-or-string'}
    out['io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta'] = {'type': 'object', 'properties': {
        'continue': {'type': 'string'}, 'remainingItemCount': {'type': 'integer', 'format': 'int64'},
        'resourceVersion': {'type': 'string'}, 'selfLink': {'type': 'string'}}}
    out['io.k8s.apimachinery.pkg.apis.meta.v1.Status'] = {'type': 'object', 'properties': {
        'apiVersion': {'type': 'string'}, 'code': {'type': 'integer', 'format': 'int32'},
        'details': {'type': 'object', 'x-kubernetes-preserve-unknown-fields': True},
        'kind': {'type': 'string'}, 'message': {'type': 'string'},
        'metadata': {'default': {}, 'allOf': [
            {'$ref': '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta'}]},
        'reason': {'type': 'string'}, 'status': {'type': 'string'}},
        'x-kubernetes-group-version-kind': [{'group': '', 'kind': 'Status', 'version': 'v1'}]}
    return out


def _param(name, desc, where='query', typ='string'):
    return {'name': name, 'in': where, 'description': desc, 'schema': {'type': typ, 'uniqueItems': True}}


_FIELD_VALIDATION = _param('fieldValidation', 'fieldValidation instructs the server on how to handle objects in '
                           'the request containing unknown or duplicate fields. Valid values are: Ignore, Warn '
                           '(the default) and Strict.')
_FIELD_MANAGER = _param('fieldManager', 'fieldManager is a name associated with the actor or entity that is '
                        'making these changes.')
_DRY_RUN = _param('dryRun', 'When present, indicates that modifications should not be persisted.')


def _op(verb, action, kind, group, version, body=None, writes=False, op_id=''):
    gvk = {'group': group, 'kind': kind, 'version': version}
    resp_ref = {'$ref': '#/components/schemas/' + schema_name(kind if kind in STRUCTS else 'Job')} \
        if not kind.endswith('List') else {'$ref': '#/components/schemas/' + schema_name(kind[:-4]) + 'List'}
    op = {'description': '%s %s' % (verb, kind), 'operationId': op_id, 'tags': [group or 'core_v1'],
          'responses': {'200': {'description': 'OK', 'content': {'application/json': {'schema': resp_ref}}},
                        '401': {'description': 'Unauthorized'}},
          'x-kubernetes-action': action, 'x-kubernetes-group-version-kind': gvk}
    params = []
    if writes:
        params += [_DRY_RUN, _FIELD_MANAGER, _FIELD_VALIDATION]
    if params:
        op['parameters'] = params
    if body:
        op['requestBody'] = {'content': {ct: {'schema': {'$ref': '#/components/schemas/' + schema_name(body)}}
                                         for ct in body_types(verb)}, 'required': True}
    return op


def body_types(verb):
    if verb == 'patch':
        return ['application/json-patch+json', 'application/merge-patch+json',
                'application/strategic-merge-patch+json', 'application/apply-patch+yaml']
    return ['*/*']


def gv_document(group, version, resources, server_version):
    """An OpenAPI v3 document for one group/version. RESOURCES: (plural, kind,
    namespaced) tuples."""
    paths = {}
    prefix = '/api/v1' if group == '' else '/apis/%s/%s' % (group, version)
    for plural, kind, namespaced, verbs in resources:
        base = prefix + ('/namespaces/{namespace}/' if namespaced else '/') + plural
        oid = kind
        coll = {'parameters': [_param('pretty', 'If true, then the output is pretty printed.')]}
        if namespaced:
            coll['parameters'].append({'name': 'namespace', 'in': 'path', 'required': True,
                                       'description': 'object name and auth scope', 'schema': {'type': 'string'}})
        if 'list' in verbs:
            coll['get'] = _op('get', 'list', kind + 'List', group, version, op_id='list' + oid)
        if 'create' in verbs:
            coll['post'] = _op('post', 'post', kind, group, version, body=kind, writes=True, op_id='create' + oid)
        if 'deletecollection' in verbs:
            coll['delete'] = _op('delete', 'deletecollection', kind, group, version, op_id='deletecollection' + oid)
        paths[base] = coll
        item = {'parameters': [{'name': 'name', 'in': 'path', 'required': True,
                                'description': 'name of the ' + kind, 'schema': {'type': 'string'}}]
                + coll['parameters']}
        if 'get' in verbs:
            item['get'] = _op('get', 'get', kind, group, version, op_id='read' + oid)
        if 'update' in verbs:
            item['put'] = _op('put', 'put', kind, group, version, body=kind, writes=True, op_id='replace' + oid)
        if 'patch' in verbs:
            item['patch'] = _op('patch', 'patch', kind, group, version, body=kind, writes=True, op_id='patch' + oid)
        if 'delete' in verbs:
            item['delete'] = _op('delete', 'delete', kind, group, version, body='DeleteOptions', op_id='delete' + oid)
        paths[base + '/{name}'] = item
        if namespaced and group == '':
            paths[prefix + '/' + plural] = {'get': _op('get', 'list', kind + 'List', group, version,
                                                       op_id='list%sForAllNamespaces' % oid)}
    return {'openapi': '3.0.0', 'info': {'title': 'Kubernetes', 'version': server_version},
            'paths': paths, 'components': {'schemas': component_schemas()}}
