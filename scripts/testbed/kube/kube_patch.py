# Strategic merge patch (application/strategic-merge-patch+json), as kubectl
# apply / label / annotate / cordon send it: lists of the built-in types that
# carry a patchMergeKey are merged element by element, and the directives
# $patch (replace, delete, merge), $setElementOrder/<list>,
# $deleteFromPrimitiveList/<list> and $retainKeys are honoured.

# list field -> merge key (from the patchMergeKey tags of k8s.io/api)
MERGE_KEYS = {
    'containers': 'name', 'initContainers': 'name', 'ephemeralContainers': 'name', 'volumes': 'name',
    'env': 'name', 'volumeMounts': 'mountPath', 'volumeDevices': 'devicePath', 'ports': 'containerPort',
    'imagePullSecrets': 'name', 'ownerReferences': 'uid', 'conditions': 'type', 'hostAliases': 'ip',
    'topologySpreadConstraints': 'topologyKey', 'taints': 'key', 'addresses': 'type', 'podIPs': 'ip',
    'hostIPs': 'ip', 'readinessGates': 'conditionType', 'resourceClaims': 'name', 'schedulingGates': 'name',
    'containerStatuses': 'name', 'initContainerStatuses': 'name',
}
# primitive lists merged as sets (patchStrategy merge)
MERGED_PRIMITIVES = {'finalizers'}


def strategic(target, patch):
    """TARGET patched by PATCH; neither is modified."""
    if not isinstance(patch, dict):
        return patch
    directive = patch.get('$patch')
    if directive == 'replace':
        return {k: v for k, v in patch.items() if k != '$patch'}
    out = dict(target) if isinstance(target, dict) else {}
    orders = {}
    for k, v in patch.items():
        if k == '$patch':
            continue
        if k == '$retainKeys':
            continue
        if k.startswith('$setElementOrder/'):
            orders[k.split('/', 1)[1]] = v
            continue
        if k.startswith('$deleteFromPrimitiveList/'):
            f = k.split('/', 1)[1]
            out[f] = [x for x in out.get(f) or [] if x not in (v or [])]
            continue
        if v is None:
            out.pop(k, None)
        elif isinstance(v, dict):
            if v.get('$patch') == 'delete':
                out.pop(k, None)
            else:
                out[k] = strategic(out.get(k), v)
        elif isinstance(v, list) and k in MERGE_KEYS and all(isinstance(x, dict) for x in v):
            out[k] = _merge_list(out.get(k) or [], v, MERGE_KEYS[k])
        elif isinstance(v, list) and k in MERGED_PRIMITIVES:
            cur = list(out.get(k) or [])
            out[k] = cur + [x for x in v if x not in cur]
        else:
            out[k] = v
    for f, order in orders.items():
        if isinstance(out.get(f), list):
            out[f] = _reorder(out[f], order, MERGE_KEYS.get(f))
    if isinstance(patch.get('$retainKeys'), list):
        keep = set(patch['$retainKeys'])
        out = {k: v for k, v in out.items() if k in keep}
    return out


def _merge_list(cur, patch, key):
    if any(x.get('$patch') == 'replace' for x in patch):
        return [{k: v for k, v in x.items() if k != '$patch'} for x in patch if x.get('$patch') != 'replace']
    out = [dict(x) if isinstance(x, dict) else x for x in cur]
    for item in patch:
        kv = item.get(key)
        idx = next((i for i, x in enumerate(out) if isinstance(x, dict) and x.get(key) == kv), None)
        if item.get('$patch') == 'delete':
            if idx is not None:
                out.pop(idx)
            continue
        if idx is None:
            out.append(strategic({}, item))
        else:
            out[idx] = strategic(out[idx], item)
    return out


def _reorder(items, order, key):
    if not key:
        return items
    pos = {}
    for i, o in enumerate(order or []):
        if isinstance(o, dict):
            pos[o.get(key)] = i
    head = sorted((x for x in items if isinstance(x, dict) and x.get(key) in pos), key=lambda x: pos[x.get(key)])
    tail = [x for x in items if not (isinstance(x, dict) and x.get(key) in pos)]
    return head + tail
