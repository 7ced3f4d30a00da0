# Server-side printing (Accept: application/json;as=Table;v=v1;g=meta.k8s.io):
# the columns kubectl shows for pods, jobs, nodes, namespaces, services,
# configmaps, secrets and events, computed as the apiserver's printers do.
import time

from kube_util import age, parse_rfc3339

NAME_DESC = ('Name must be unique within a namespace. Is required when creating resources, although some '
             'resources may allow a client to request the generation of an appropriate name automatically. Name '
             'is primarily intended for creation idempotence and configuration definition. Cannot be updated. '
             'More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names')
AGE_DESC = ('CreationTimestamp is a timestamp representing the server time when this object was created. It is '
            'not guaranteed to be set in happens-before order across separate operations. Clients may not set '
            'this value. It is represented in RFC3339 form and is in UTC.')


def col(name, typ='string', prio=0, fmt='', desc=''):
    return {'name': name, 'type': typ, 'format': fmt, 'description': desc or name, 'priority': prio}


COLUMNS = {
    'pods': [col('Name', fmt='name', desc=NAME_DESC), col('Ready', desc='The aggregate readiness state of this '
             'pod for accepting traffic.'), col('Status', desc='The aggregate status of the containers in this '
             'pod.'), col('Restarts', desc='The number of times the containers in this pod have been restarted '
             'and when the last container in this pod has restarted.'), col('Age', desc=AGE_DESC),
             col('IP', prio=1, desc='IP address allocated to the pod. Routable at least within the cluster. '
                 'Empty if not yet allocated.'), col('Node', prio=1, desc='NodeName is a request to schedule this '
                 'pod onto a specific node.'), col('Nominated Node', prio=1, desc='nominatedNodeName is set only '
                 'when this pod preempts other pods on the node.'), col('Readiness Gates', prio=1,
                                                                         desc='If specified, all readiness gates '
                                                                         'will be evaluated for pod readiness.')],
    'jobs': [col('Name', fmt='name', desc=NAME_DESC), col('Status', desc='Status of the job.'),
             col('Completions', desc='The desired number of successfully finished pods the job should be run '
                 'with.'), col('Duration', desc='Time required to complete the job.'), col('Age', desc=AGE_DESC),
             col('Containers', prio=1, desc='Names of each container in the template.'),
             col('Images', prio=1, desc='Images referenced by each container in the template.'),
             col('Selector', prio=1, desc='A label query over pods that should match the pod count.')],
    'nodes': [col('Name', fmt='name', desc=NAME_DESC), col('Status', desc='The status of the node'),
              col('Roles', desc='The roles of the node'), col('Age', desc=AGE_DESC),
              col('Version', desc='Kubelet Version reported by the node.'),
              col('Internal-IP', prio=1, desc='List of addresses reachable to the node. Queried from cloud '
                  'provider, if available.'), col('External-IP', prio=1, desc='List of addresses reachable to the '
                  'node.'), col('OS-Image', prio=1, desc='OS Image reported by the node from /etc/os-release.'),
              col('Kernel-Version', prio=1, desc="Kernel Version reported by the node from 'uname -r'."),
              col('Container-Runtime', prio=1, desc='ContainerRuntime Version reported by the node through '
                  'runtime remote API.')],
    'namespaces': [col('Name', fmt='name', desc=NAME_DESC), col('Status', desc='The status of the namespace'),
                   col('Age', desc=AGE_DESC)],
    'services': [col('Name', fmt='name', desc=NAME_DESC), col('Type', desc='The type of the service.'),
                 col('Cluster-IP', desc='The IP address of the service.'),
                 col('External-IP', desc='The external IP of the service.'),
                 col('Port(s)', desc='The ports exposed by the service.'), col('Age', desc=AGE_DESC),
                 col('Selector', prio=1, desc='Route service traffic to pods with label keys and values matching '
                     'this selector.')],
    'configmaps': [col('Name', fmt='name', desc=NAME_DESC), col('Data', 'integer', desc='Number of data items'),
                   col('Age', desc=AGE_DESC)],
    'secrets': [col('Name', fmt='name', desc=NAME_DESC), col('Type', desc='The type of the secret'),
                col('Data', 'integer', desc='Number of data items'), col('Age', desc=AGE_DESC)],
    'events': [col('Last Seen'), col('Type'), col('Reason'), col('Object'), col('Subobject', prio=1),
               col('Source', prio=1), col('Message'), col('First Seen', prio=1), col('Count', prio=1),
               col('Name', prio=1)],
}


def _cond(obj, ctype):
    return any(c.get('type') == ctype and c.get('status') == 'True'
               for c in (obj.get('status') or {}).get('conditions', []))


def pod_row(p):
    st, sp, md = p.get('status') or {}, p.get('spec') or {}, p['metadata']
    restarts, ready, last_restart = 0, 0, None
    total = len(sp.get('containers', []))
    reason = st.get('reason') or st.get('phase', 'Pending')
    initializing = False
    inits = sp.get('initContainers') or []
    for i, c in enumerate(st.get('initContainerStatuses', [])):
        restarts += c.get('restartCount', 0)
        state = c.get('state') or {}
        t, w = state.get('terminated'), state.get('waiting')
        if t and t.get('exitCode') == 0:
            continue
        initializing = True
        if t:
            reason = 'Init:' + (t.get('reason') or 'ExitCode:%d' % t.get('exitCode', 0))
        elif w and w.get('reason') and w['reason'] != 'PodInitializing':
            reason = 'Init:' + w['reason']
        else:
            reason = 'Init:%d/%d' % (i, len(inits))
        break
    if not initializing:
        restarts, running = 0, False
        for c in reversed(st.get('containerStatuses', [])):
            restarts += c.get('restartCount', 0)
            lt = (c.get('lastState') or {}).get('terminated')
            if lt and lt.get('finishedAt') and (last_restart is None or lt['finishedAt'] > last_restart):
                last_restart = lt['finishedAt']
            state = c.get('state') or {}
            w, t = state.get('waiting'), state.get('terminated')
            if w and w.get('reason'):
                reason = w['reason']
            elif t and t.get('reason'):
                reason = t['reason']
            elif t:
                reason = 'ExitCode:%d' % t.get('exitCode', 0)
            elif c.get('ready') and 'running' in state:
                running = True
                ready += 1
        if reason == 'Completed' and running:
            reason = 'Running' if _cond(p, 'Ready') else 'NotReady'
    if md.get('deletionTimestamp'):
        reason = 'Unknown' if st.get('reason') == 'NodeLost' else 'Terminating'
    rs = str(restarts)
    if restarts and last_restart:
        rs += ' (%s ago)' % age(last_restart)
    return ['%d/%d' % (ready, total), reason, rs, age(md.get('creationTimestamp')), st.get('podIP') or '<none>',
            sp.get('nodeName') or '<none>', st.get('nominatedNodeName') or '<none>', '<none>']


def job_row(j):
    sp, st = j.get('spec') or {}, j.get('status') or {}
    if _cond(j, 'Complete'):
        status = 'Complete'
    elif _cond(j, 'Failed'):
        status = 'Failed'
    elif j['metadata'].get('deletionTimestamp'):
        status = 'Terminating'
    elif _cond(j, 'Suspended'):
        status = 'Suspended'
    elif _cond(j, 'FailureTarget'):
        status = 'FailureTarget'
    elif _cond(j, 'SuccessCriteriaMet'):
        status = 'SuccessCriteriaMet'
    else:
        status = 'Running'
    comp, par = sp.get('completions'), sp.get('parallelism', 1)
    if comp is not None:
        completions = '%d/%d' % (st.get('succeeded', 0), comp)
    else:
        completions = '%d/1' % st.get('succeeded', 0) + (' of %d' % par if par > 1 else '')
    start, end = parse_rfc3339(st.get('startTime')), parse_rfc3339(st.get('completionTime'))
    duration = ''
    if start:
        d = int((end or time.time()) - start)
        duration = '%ds' % d if d < 120 else '%dm%ds' % (d // 60, d % 60) if d < 600 else '%dm' % (d // 60)
    cs = (sp.get('template') or {}).get('spec', {}).get('containers', [])
    sel = ','.join('%s=%s' % kv for kv in sorted(((sp.get('selector') or {}).get('matchLabels') or {}).items()))
    return [status, completions, duration, age(j['metadata'].get('creationTimestamp')),
            ','.join(c['name'] for c in cs), ','.join(c.get('image', '') for c in cs), sel or '<none>']


def node_row(n):
    st, sp, md = n.get('status') or {}, n.get('spec') or {}, n['metadata']
    ready = next((c for c in st.get('conditions', []) if c['type'] == 'Ready'), None)
    status = 'Unknown' if ready is None or ready['status'] == 'Unknown' else (
        'Ready' if ready['status'] == 'True' else 'NotReady')
    if sp.get('unschedulable'):
        status += ',SchedulingDisabled'
    roles = sorted(k.split('/', 1)[1] for k in (md.get('labels') or {}) if k.startswith('node-role.kubernetes.io/'))
    addr = {a['type']: a['address'] for a in st.get('addresses', [])}
    info = st.get('nodeInfo') or {}
    return [status, ','.join(roles) or '<none>', age(md.get('creationTimestamp')), info.get('kubeletVersion', ''),
            addr.get('InternalIP', '<none>'), addr.get('ExternalIP', '<none>'), info.get('osImage', '<unknown>'),
            info.get('kernelVersion', '<unknown>'), info.get('containerRuntimeVersion', '<unknown>')]


def service_row(s):
    sp = s.get('spec') or {}
    ports = ','.join('%s/%s' % (p.get('port'), p.get('protocol', 'TCP')) for p in sp.get('ports', [])) or '<none>'
    sel = ','.join('%s=%s' % kv for kv in sorted((sp.get('selector') or {}).items())) or '<none>'
    return [sp.get('type', 'ClusterIP'), sp.get('clusterIP', '<none>'), '<none>', ports,
            age(s['metadata'].get('creationTimestamp')), sel]


def event_row(e):
    io = e.get('involvedObject') or {}
    last = e.get('lastTimestamp') or e.get('eventTime') or e['metadata'].get('creationTimestamp')
    return [age(last), e.get('type', ''), e.get('reason', ''), '%s/%s' % (io.get('kind', '').lower(),
                                                                        io.get('name', '')),
            io.get('fieldPath', ''), (e.get('source') or {}).get('component', ''), e.get('message', ''),
            age(e.get('firstTimestamp') or last), e.get('count', 1), e['metadata']['name']]


def row_cells(res, o):
    md = o['metadata']
    if res == 'pods':
        return [md['name']] + pod_row(o)
    if res == 'jobs':
        return [md['name']] + job_row(o)
    if res == 'nodes':
        return [md['name']] + node_row(o)
    if res == 'namespaces':
        return [md['name'], (o.get('status') or {}).get('phase', 'Active'), age(md.get('creationTimestamp'))]
    if res == 'services':
        return [md['name']] + service_row(o)
    if res == 'configmaps':
        return [md['name'], len(o.get('data') or {}) + len(o.get('binaryData') or {}),
                age(md.get('creationTimestamp'))]
    if res == 'secrets':
        return [md['name'], o.get('type', 'Opaque'), len(o.get('data') or {}), age(md.get('creationTimestamp'))]
    if res == 'events':
        return event_row(o)
    return None


def to_table(res, doc, include='Metadata'):
    """A meta.k8s.io/v1 Table for a List or one object (None if unsupported)."""
    if res not in COLUMNS:
        return None
    items = doc.get('items') if 'items' in doc else [doc]
    kind = doc.get('kind', '')
    if kind.endswith('List'):
        kind = kind[:-4]
    api_version = doc.get('apiVersion', 'v1')
    rows = []
    for o in items or []:
        r = {'cells': row_cells(res, o)}
        if include == 'Object':
            r['object'] = dict({'kind': kind, 'apiVersion': api_version}, **{k: v for k, v in o.items()
                                                                             if k not in ('kind', 'apiVersion')})
        elif include != 'None':
            r['object'] = {'kind': 'PartialObjectMetadata', 'apiVersion': 'meta.k8s.io/v1',
                           'metadata': o['metadata']}
        rows.append(r)
    meta = {'resourceVersion': (doc.get('metadata') or {}).get('resourceVersion', '')}
    if (doc.get('metadata') or {}).get('continue') and 'items' in doc:
        meta['continue'] = doc['metadata']['continue']
    if 'remainingItemCount' in (doc.get('metadata') or {}) and 'items' in doc:
        meta['remainingItemCount'] = doc['metadata']['remainingItemCount']
    return {'kind': 'Table', 'apiVersion': 'meta.k8s.io/v1', 'metadata': meta, 'columnDefinitions': COLUMNS[res],
            'rows': rows}
