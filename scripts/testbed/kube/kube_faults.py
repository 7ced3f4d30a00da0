# The kubelet's answers to requests from other threads: the disruptions of
# /_fake/ (evictions, node loss and return), the report of lost containers,
# and where pods/log finds a container's log. Mixed into kube_kubelet.Kubelet;
# these run with the store lock held by the caller (or take it) and only
# signal processes, never fork.
import os
import signal

from kube_api import set_condition
from kube_util import RESOURCES, bad_request, not_found, rfc3339

TERMINAL = ('Succeeded', 'Failed')
EPOCH = '1970-01-01T00:00:00Z'
DISRUPTION_MESSAGES = {
    'EvictionByEvictionAPI': 'Eviction API: evicting',
    'PreemptionByScheduler': 'default-scheduler: preempting to accommodate a higher priority pod',
    'TerminationByKubelet': 'The node was low on resource: memory. Threshold quantity: 100Mi, available: 64Mi.',
    'DeletionByTaintManager': 'Taint manager: deleting due to NoExecute taint',
    'DeletionByPodGC': 'PodGC: node no longer exists',
}
LOST_MESSAGE = 'The container could not be located when the pod was terminated'


class KubeletFaults:
    def _mark_lost(self, o, reason):
        st = o.setdefault('status', {})
        now = rfc3339()
        for key in ('initContainerStatuses', 'containerStatuses'):
            for s in st.get(key, []):
                state = s.get('state') or {}
                if 'terminated' in state:
                    continue
                started = (state.get('running') or {}).get('startedAt')
                s['state'] = {'terminated': {'exitCode': 137, 'reason': 'ContainerStatusUnknown',
                                             'message': LOST_MESSAGE, 'startedAt': started or EPOCH,
                                             'finishedAt': now}}
                s['ready'], s['started'] = False, False
        st['phase'] = 'Failed'
        if reason:
            set_condition(o, 'DisruptionTarget', 'True', reason, DISRUPTION_MESSAGES[reason])
        for c in ('Ready', 'ContainersReady'):
            set_condition(o, c, 'False', 'PodFailed')
        set_condition(o, 'PodReadyToStartContainers', 'False')

    def disrupt(self, ns, name, reason, message=None):
        msg = message or DISRUPTION_MESSAGES[reason]
        rec = None
        p = self.store.peek('pods', ns, name)
        if p is not None:
            rec = self.pods.get(p['metadata']['uid'])
        if rec is None or not rec.sandbox:
            def fail(o):
                set_condition(o, 'DisruptionTarget', 'True', reason, msg)
                o['status']['phase'] = 'Failed'
                for c in ('Ready', 'ContainersReady'):
                    set_condition(o, c, 'False', 'PodFailed')
            self.store.update('pods', ns, name, fail)
            return
        rec.disrupted = reason
        self.store.update('pods', ns, name, lambda o: set_condition(o, 'DisruptionTarget', 'True', reason, msg))
        self._kill(rec, p['spec'].get('terminationGracePeriodSeconds', 30))
        self.store.changed.notify_all()

    def node_lost(self, node, status='False'):
        self.lost_nodes.add(node)
        unreachable = status == 'Unknown'
        taint = 'node.kubernetes.io/unreachable' if unreachable else 'node.kubernetes.io/not-ready'

        def mark(o):
            conds = o.setdefault('status', {}).setdefault('conditions', [])
            for c in conds:
                if c['type'] == 'Ready':
                    c.update(status=status, reason='NodeStatusUnknown' if unreachable else 'KubeletNotReady',
                             message='Kubelet stopped posting node status.' if unreachable else
                             'container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady',
                             lastTransitionTime=rfc3339(), lastHeartbeatTime=rfc3339())
            ts = [t for t in o['spec'].get('taints', []) if not t['key'].startswith('node.kubernetes.io/')]
            ts += [{'key': taint, 'effect': 'NoSchedule', 'timeAdded': rfc3339()},
                   {'key': taint, 'effect': 'NoExecute', 'timeAdded': rfc3339()}]
            o['spec']['taints'] = ts
        self.store.update('nodes', '', node, mark)
        for p in self.store.objects('pods'):
            if p['spec'].get('nodeName') != node or p.get('status', {}).get('phase') in TERMINAL:
                continue
            rec = self.pods.get(p['metadata']['uid'])
            if rec is not None:
                rec.killing, rec.kill_deadline = True, 0
                for c in rec.alive():
                    c.proc.signal(signal.SIGKILL)
            self.store.update('pods', p['metadata']['namespace'], p['metadata']['name'],
                              lambda o: self._mark_lost(o, 'DeletionByTaintManager'))

    def node_back(self, node):
        self.lost_nodes.discard(node)

        def mark(o):
            for c in o.setdefault('status', {}).setdefault('conditions', []):
                if c['type'] == 'Ready':
                    c.update(status='True', reason='KubeletReady', message='kubelet is posting ready status',
                             lastTransitionTime=rfc3339(), lastHeartbeatTime=rfc3339())
            o['spec']['taints'] = [t for t in o['spec'].get('taints', [])
                                   if not t['key'].startswith('node.kubernetes.io/')]
            if not o['spec']['taints']:
                del o['spec']['taints']
        self.store.update('nodes', '', node, mark)

    def log_source(self, ns, name, container, previous):
        """(log path, alive()) for pods/log, or the apiserver's 400."""
        with self.store.lock:
            p = self.store.peek('pods', ns, name)
            if p is None:
                raise not_found(RESOURCES['pods'], name)
            names = [c['name'] for c in p['spec'].get('containers', [])]
            inits = [c['name'] for c in p['spec'].get('initContainers') or []]
            if not container:
                if len(names) != 1:
                    raise bad_request('a container name must be specified for pod %s, choose one of: [%s]%s' % (
                        name, ' '.join(names), ' or one of the init containers: [%s]' % ' '.join(inits)
                        if inits else ''))
                container = names[0]
            if container not in names + inits:
                raise bad_request('container %s is not valid for pod %s' % (container, name))
            st = next((s for s in p.get('status', {}).get('containerStatuses', []) +
                       p.get('status', {}).get('initContainerStatuses', []) if s['name'] == container), None)
            rec = self.pods.get(p['metadata']['uid'])
            restarts = st.get('restartCount', 0) if st else 0
            if previous:
                if restarts == 0:
                    raise bad_request('previous terminated container "%s" in pod "%s" not found' % (container, name))
                restarts -= 1
            elif st is None or ('waiting' in st.get('state', {}) and not st.get('containerID')):
                reason = ((st or {}).get('state', {}).get('waiting') or {}).get('reason', 'ContainerCreating')
                if reason in ('ErrImagePull', 'ImagePullBackOff'):
                    reason = 'trying and failing to pull image'
                raise bad_request('container "%s" in pod "%s" is waiting to start: %s' % (container, name, reason))
            path = os.path.join(self.root, '%s_%s_%s' % (ns, name, p['metadata']['uid']), 'logs', container,
                                '%d.log' % restarts)
            cr = rec.cs.get(container) if rec else None
            n = restarts

        def alive():
            with self.store.lock:
                return cr is not None and cr.proc is not None and cr.restarts == n and \
                    self.store.peek('pods', ns, name) is not None
        return path, alive
