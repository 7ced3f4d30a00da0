# The controllers of the fake cluster, run by one manager thread under the
# store lock: the garbage collector (dependents of deleted Jobs, foreground
# deletion, namespace deletion, TTL after finished), the Job controller and
# the scheduler. The kubelet (kube_kubelet.py) runs in the same thread: it
# must, because a launcher's parent-death signal follows the thread that
# forked it.
import collections
import json
import sys
import time

import kube_objects as ko
from kube_api import DEPENDENT_RESOURCES, OWNER_RESOURCES, set_condition
from kube_util import parse_quantity, parse_rfc3339, rfc3339

TERMINAL = ('Succeeded', 'Failed')


def emit_event(store, api, obj, kind, etype, reason, message, component):
    md = obj['metadata']
    ns = md.get('namespace') or 'default'
    now = rfc3339()
    ev = {'metadata': {'name': '%s.%x' % (md['name'], int(time.time() * 1e9)), 'namespace': ns},
          'involvedObject': {'kind': kind, 'namespace': md.get('namespace', ''), 'name': md['name'],
                             'uid': md.get('uid', ''), 'apiVersion': 'batch/v1' if kind == 'Job' else 'v1',
                             'resourceVersion': md.get('resourceVersion', '')},
          'reason': reason, 'message': message, 'source': {'component': component},
          'firstTimestamp': now, 'lastTimestamp': now, 'count': 1, 'type': etype, 'eventTime': None,
          'reportingComponent': component, 'reportingInstance': ''}
    if not md.get('namespace'):
        ev['involvedObject'].pop('namespace')
    try:
        api.create_internal('events', ev)
    except Exception:  # noqa: BLE001
        return
    keys = store.keys['events']
    if len(keys) > 1000:
        for e in store.entries('events')[:len(keys) - 1000]:
            store.remove('events', e.fields['metadata.namespace'], e.fields['metadata.name'])


def job_finished(job):
    for c in (job.get('status') or {}).get('conditions', []):
        if c['type'] in ('Complete', 'Failed') and c['status'] == 'True':
            return c
    return None


def index_ranges(idxs):
    out, run = [], []
    for i in sorted(idxs):
        if run and i == run[-1] + 1:
            run.append(i)
            continue
        if run:
            out.append(str(run[0]) if len(run) == 1 else '%d-%d' % (run[0], run[-1]))
        run = [i]
    if run:
        out.append(str(run[0]) if len(run) == 1 else '%d-%d' % (run[0], run[-1]))
    return ','.join(out)


def pod_index(pod):
    v = (pod['metadata'].get('annotations') or {}).get('batch.kubernetes.io/job-completion-index')
    return int(v) if v is not None and v.isdigit() else None


class Controllers:
    def __init__(self, store, api, cfg):
        self.store, self.api, self.cfg = store, api, cfg
        self.backoff_base = float(cfg.get('job_backoff_seconds', 1))
        self.known = {}          # job uid -> {pod uid: last phase seen}
        self.counted = set()     # pod uids already in a job's succeeded/failed
        self.ignore_gone = set() # pod uids deleted by the controller itself (not failures)
        self.next_create = {}    # job uid -> monotonic time before which no pod is created
        self.sched_tried = {}    # pod uid -> (monotonic time, message) of the last failed attempt
        self.emit = lambda obj, kind, t, reason, msg, comp: emit_event(store, api, obj, kind, t, reason, msg, comp)

    def adopt_after_restart(self):
        """Terminal pods that exist at start are already counted."""
        for p in self.store.objects('pods'):
            if p.get('status', {}).get('phase') in TERMINAL:
                self.counted.add(p['metadata']['uid'])

    # --------------------------------------------------------------- GC
    def gc(self):
        st = self.store
        jobs = {j['metadata']['uid']: j for j in st.objects('jobs')}
        # As Kubernetes' garbage collector: an object whose owners are all
        # gone goes too (a Job's pods, and the Service and ConfigMap that
        # skyslurm makes owned by its Job).
        uids = {'jobs': set(jobs)}
        for res in DEPENDENT_RESOURCES:
            for o in st.objects(res):
                md = o['metadata']
                refs = md.get('ownerReferences') or []
                if not refs or md.get('deletionTimestamp'):
                    continue
                present = False
                for ref in refs:
                    owner_res = OWNER_RESOURCES.get(ref.get('kind'))
                    if owner_res is None:
                        present = True
                        break
                    if owner_res not in uids:
                        uids[owner_res] = {x['metadata']['uid'] for x in st.objects(owner_res)}
                    if ref.get('uid') in uids[owner_res]:
                        present = True
                        break
                if not present:
                    if res == 'pods':
                        self.ignore_gone.add(md['uid'])
                    self.api.delete(res, md['namespace'], md['name'], {})
        for uid, j in jobs.items():
            md = j['metadata']
            if md.get('deletionTimestamp') and 'foregroundDeletion' in md.get('finalizers', []):
                deps = self.api.dependents(md['namespace'], uid)
                for res, p in deps:
                    if not p['metadata'].get('deletionTimestamp'):
                        if res == 'pods':
                            self.ignore_gone.add(p['metadata']['uid'])
                        self.api.delete(res, md['namespace'], p['metadata']['name'], {})
                if not deps:
                    st.remove('jobs', md['namespace'], md['name'])
                continue
            fin = job_finished(j)
            ttl = j['spec'].get('ttlSecondsAfterFinished')
            if fin and ttl is not None:
                t = parse_rfc3339(j['status'].get('completionTime') or fin.get('lastTransitionTime'))
                if t is not None and time.time() >= t + ttl:
                    self.api.delete('jobs', md['namespace'], md['name'], {'propagationPolicy': 'Background'})
        for ns in st.objects('namespaces'):
            if not ns['metadata'].get('deletionTimestamp'):
                continue
            name, left = ns['metadata']['name'], 0
            for res in ('jobs', 'pods', 'services', 'configmaps', 'secrets', 'events'):
                for e in st.entries(res, name, include_synthetic=True):
                    left += 1
                    o = e.get_obj()
                    if not o['metadata'].get('deletionTimestamp'):
                        self.api.delete(res, name, o['metadata']['name'], {'propagationPolicy': 'Background'})
            if left == 0:
                st.remove('namespaces', '', name)

    # -------------------------------------------------------------- jobs
    def jobs(self):
        st = self.store
        pods_by_owner = collections.defaultdict(list)
        for p in st.objects('pods'):
            for ref in p['metadata'].get('ownerReferences', []):
                if ref.get('controller') and ref.get('kind') == 'Job':
                    pods_by_owner[ref['uid']].append(p)
        live_uids = set()
        for j in st.objects('jobs'):
            uid = j['metadata']['uid']
            live_uids.add(uid)
            self.sync_job(j, pods_by_owner.get(uid, []))
        for uid in list(self.known):
            if uid not in live_uids:
                del self.known[uid]

    def sync_job(self, job, pods):
        md, spec = job['metadata'], job['spec']
        ns, name, uid = md['namespace'], md['name'], md['uid']
        if md.get('deletionTimestamp'):
            return
        known = self.known.setdefault(uid, {})
        indexed = spec.get('completionMode') == 'Indexed'
        status = job.get('status') or {}
        succeeded, failed = status.get('succeeded', 0), status.get('failed', 0)
        done_idx = set()
        if indexed and status.get('completedIndexes'):
            for part in status['completedIndexes'].split(','):
                a, _, b = part.partition('-')
                done_idx.update(range(int(a), int(b or a) + 1))
        new_failures = []
        present = set()
        for p in pods:
            pu, phase = p['metadata']['uid'], p.get('status', {}).get('phase')
            present.add(pu)
            known[pu] = phase
            if phase in TERMINAL and pu not in self.counted:
                self.counted.add(pu)
                if phase == 'Succeeded':
                    if indexed:
                        i = pod_index(p)
                        if i is not None and i < spec.get('completions', 0) and i not in done_idx:
                            done_idx.add(i)
                            succeeded += 1
                    else:
                        succeeded += 1
                elif pu not in self.ignore_gone:
                    rule = self.failure_rule(job, p)
                    if rule != 'Ignore':
                        failed += 1
                        new_failures.append((p, rule))
        for pu in [u for u in known if u not in present]:
            if pu not in self.counted and pu not in self.ignore_gone and known[pu] not in TERMINAL:
                self.counted.add(pu)
                failed += 1
                new_failures.append((None, 'Count'))
            del known[pu]
        finished = job_finished(job)
        active = [p for p in pods if p.get('status', {}).get('phase') not in TERMINAL
                  and not p['metadata'].get('deletionTimestamp')]
        terminating = [p for p in pods if p.get('status', {}).get('phase') not in TERMINAL
                       and p['metadata'].get('deletionTimestamp')]
        now = rfc3339()
        restarts = sum(cs.get('restartCount', 0) for p in pods
                       for cs in p.get('status', {}).get('containerStatuses', []))
        fail_reason = None
        if finished is None:
            if any(r == 'FailJob' for _, r in new_failures):
                p, _ = next((p, r) for p, r in new_failures if r == 'FailJob')
                fail_reason = ('PodFailurePolicy', self.failjob_message(job, p))
            elif failed + restarts > spec.get('backoffLimit', 6):
                fail_reason = ('BackoffLimitExceeded', 'Job has reached the specified backoff limit')
            elif spec.get('activeDeadlineSeconds') and status.get('startTime') and not spec.get('suspend') and \
                    time.time() >= parse_rfc3339(status['startTime']) + spec['activeDeadlineSeconds']:
                fail_reason = ('DeadlineExceeded', 'Job was active longer than specified deadline')
        completions = spec.get('completions')
        if indexed:
            complete = len(done_idx) >= (completions or 0)
        elif completions is not None:
            complete = succeeded >= completions
        else:
            complete = succeeded > 0 and not active
        if new_failures:
            n = failed + restarts
            self.next_create[uid] = time.monotonic() + min(self.backoff_base * 2 ** max(n - 1, 0), 360)
        # ------------------------------------------------ act
        if finished is None and (fail_reason or complete or spec.get('suspend')):
            for p in active:
                self.ignore_gone.add(p['metadata']['uid'])
                self.api.delete('pods', ns, p['metadata']['name'], {})
                self.emit(job, 'Job', 'Normal', 'SuccessfulDelete', 'Deleted pod: %s' % p['metadata']['name'],
                          'job-controller')
            terminating += active
            active = []
        elif finished is None:
            active = self.create_pods(job, active, done_idx, succeeded)
        ready = sum(1 for p in active if any(c['type'] == 'Ready' and c['status'] == 'True'
                                            for c in p.get('status', {}).get('conditions', [])))

        def apply(o):
            s = o.setdefault('status', {})
            s['active'] = len(active)
            s['ready'] = ready
            s['terminating'] = len(terminating)
            s['succeeded'] = succeeded
            s['failed'] = failed
            s['uncountedTerminatedPods'] = {}
            for k in ('active', 'succeeded', 'failed', 'terminating'):
                if not s[k]:
                    s.pop(k)
            if indexed:
                s['completedIndexes'] = index_ranges(done_idx)
                if not s['completedIndexes']:
                    s.pop('completedIndexes')
            if finished is not None:
                return
            sp = o['spec']
            if sp.get('suspend'):
                if set_condition(o, 'Suspended', 'True', 'JobSuspended', 'Job suspended'):
                    self.emit(o, 'Job', 'Normal', 'Suspended', 'Job suspended', 'job-controller')
                s.pop('startTime', None)
                return
            if any(c['type'] == 'Suspended' and c['status'] == 'True' for c in s.get('conditions', [])):
                set_condition(o, 'Suspended', 'False', 'JobResumed', 'Job resumed')
                self.emit(o, 'Job', 'Normal', 'Resumed', 'Job resumed', 'job-controller')
                s['startTime'] = now
            s.setdefault('startTime', now)
            if fail_reason:
                set_condition(o, 'FailureTarget', 'True', *fail_reason)
                set_condition(o, 'Failed', 'True', *fail_reason)
                self._no_probe(o)
                self.emit(o, 'Job', 'Warning', fail_reason[0], fail_reason[1], 'job-controller')
            elif complete:
                set_condition(o, 'SuccessCriteriaMet', 'True', 'CompletionsReached',
                              'Reached expected number of succeeded pods')
                set_condition(o, 'Complete', 'True', 'CompletionsReached', 'Reached expected number of succeeded pods')
                self._no_probe(o)
                s['completionTime'] = now
                self.emit(o, 'Job', 'Normal', 'Completed', 'Job completed', 'job-controller')
        self.store.update('jobs', ns, name, lambda o: (apply(o), self._no_probe(o)), missing_ok=True)

    @staticmethod
    def _no_probe(o):
        """Job conditions carry lastProbeTime = lastTransitionTime."""
        for c in o['status'].get('conditions', []):
            if c.get('lastProbeTime') is None:
                c['lastProbeTime'] = c.get('lastTransitionTime')

    def failure_rule(self, job, pod):
        """The podFailurePolicy action for a failed pod: FailJob, Ignore, Count."""
        pfp = job['spec'].get('podFailurePolicy') or {}
        cs = pod.get('status', {}).get('containerStatuses', [])
        for rule in pfp.get('rules', []):
            oec = rule.get('onExitCodes')
            if oec:
                for c in cs:
                    t = (c.get('state') or {}).get('terminated') or {}
                    code = t.get('exitCode')
                    if code in (None, 0) or (oec.get('containerName') and oec['containerName'] != c['name']):
                        continue
                    inside = code in (oec.get('values') or [])
                    if inside == (oec.get('operator') == 'In'):
                        return rule.get('action', 'Count')
            for pat in rule.get('onPodConditions') or []:
                for c in pod.get('status', {}).get('conditions', []):
                    if c['type'] == pat.get('type') and c['status'] == pat.get('status', 'True'):
                        return rule.get('action', 'Count')
        return 'Count'

    @staticmethod
    def failjob_message(job, pod):
        for i, rule in enumerate(job['spec'].get('podFailurePolicy', {}).get('rules', [])):
            for c in pod.get('status', {}).get('containerStatuses', []):
                code = ((c.get('state') or {}).get('terminated') or {}).get('exitCode')
                if code:
                    return ('Container %s for pod %s/%s failed with exit code %d matching FailJob rule at index %d'
                            % (c['name'], pod['metadata']['namespace'], pod['metadata']['name'], code, i))
        return 'Pod %s/%s has condition matching FailJob rule' % (pod['metadata']['namespace'],
                                                                  pod['metadata']['name'])

    def create_pods(self, job, active, done_idx, succeeded):
        spec, md = job['spec'], job['metadata']
        if self.next_create.get(md['uid'], 0) > time.monotonic():
            return active
        par = spec.get('parallelism', 1)
        comp = spec.get('completions')
        if spec.get('completionMode') == 'Indexed':
            busy = {pod_index(p) for p in active}
            todo = [i for i in range(comp) if i not in done_idx and i not in busy]
            todo = todo[:max(par - len(active), 0)]
        else:
            want = min(par, comp - succeeded) if comp is not None else (par if succeeded == 0 else 0)
            todo = [None] * max(want - len(active), 0)
        for idx in todo:
            pod = self.pod_from_template(job, idx)
            raw = self.api.create_internal('pods', pod)
            p = json.loads(raw)
            active.append(p)
            self.known.setdefault(md['uid'], {})[p['metadata']['uid']] = 'Pending'
            self.emit(job, 'Job', 'Normal', 'SuccessfulCreate', 'Created pod: %s' % p['metadata']['name'],
                      'job-controller')
        return active

    def pod_from_template(self, job, idx):
        md, spec = job['metadata'], job['spec']
        tmpl = json.loads(json.dumps(spec.get('template', {})))
        pmd = tmpl.get('metadata') or {}
        pod = {'metadata': {'namespace': md['namespace'], 'labels': dict(pmd.get('labels') or {}),
                            'ownerReferences': [{'apiVersion': 'batch/v1', 'kind': 'Job', 'name': md['name'],
                                                 'uid': md['uid'], 'controller': True, 'blockOwnerDeletion': True}]},
               'spec': tmpl.get('spec', {})}
        if pmd.get('annotations'):
            pod['metadata']['annotations'] = dict(pmd['annotations'])
        if idx is None:
            pod['metadata']['generateName'] = md['name'] + '-'
        else:
            pod['metadata']['generateName'] = '%s-%d-' % (md['name'], idx)
            pod['metadata']['labels']['batch.kubernetes.io/job-completion-index'] = str(idx)
            pod['metadata'].setdefault('annotations', {})['batch.kubernetes.io/job-completion-index'] = str(idx)
            if not pod['spec'].get('hostname'):
                pod['spec']['hostname'] = '%s-%d' % (md['name'], idx)
            for c in pod['spec'].get('initContainers', []) + pod['spec'].get('containers', []):
                env = c.setdefault('env', [])
                if not any(e.get('name') == 'JOB_COMPLETION_INDEX' for e in env):
                    env.append({'name': 'JOB_COMPLETION_INDEX', 'valueFrom': {'fieldRef': {
                        'apiVersion': 'v1',
                        'fieldPath': "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}})
        return pod

    # --------------------------------------------------------- scheduler
    def schedule(self):
        st = self.store
        pending, used = [], collections.defaultdict(lambda: collections.defaultdict(float))
        for p in st.objects('pods'):
            sp, phase = p.get('spec', {}), p.get('status', {}).get('phase')
            if sp.get('nodeName'):
                if phase not in TERMINAL:
                    used[sp['nodeName']]['pods'] += 1
                    for k, v in ko.pod_requests(sp).items():
                        used[sp['nodeName']][k] += v
            elif phase == 'Pending' and not p['metadata'].get('deletionTimestamp') and \
                    sp.get('schedulerName', 'default-scheduler') == 'default-scheduler':
                pending.append(p)
        for pu in list(self.sched_tried):
            if pu not in {p['metadata']['uid'] for p in pending}:
                del self.sched_tried[pu]
        if not pending:
            return
        nodes = [e.get_obj() for e in st.entries('nodes', include_synthetic=True)]
        pending.sort(key=lambda p: -(p['spec'].get('priority') or 0))
        now = time.monotonic()
        for p in pending:
            pu = p['metadata']['uid']
            tried = self.sched_tried.get(pu)
            if tried and now - tried[0] < 1.0:
                continue
            req = ko.pod_requests(p['spec'])
            reasons, fits, nres = collections.Counter(), [], 0
            for n in nodes:
                why = self.reject(p, req, n, used[n['metadata']['name']])
                if why:
                    for w in why:
                        reasons[w] += 1
                    if all(w.startswith('Insufficient ') or w == 'Too many pods' for w in why):
                        nres += 1
                else:
                    fits.append(n)
            if fits:
                best = min(fits, key=lambda n: (-self.free_score(req, n, used[n['metadata']['name']]),
                                                n['metadata']['name']))
                bname = best['metadata']['name']
                used[bname]['pods'] += 1
                for k, v in req.items():
                    used[bname][k] += v
                self.sched_tried.pop(pu, None)

                def bind(o, bname=bname):
                    o['spec']['nodeName'] = bname
                    set_condition(o, 'PodScheduled', 'True')
                self.store.update('pods', p['metadata']['namespace'], p['metadata']['name'], bind)
                sys.stderr.write('%s scheduler: bound %s/%s to %s\n' % (
                    time.strftime('%H:%M:%S'), p['metadata']['namespace'], p['metadata']['name'], bname))
                self.emit(p, 'Pod', 'Normal', 'Scheduled', 'Successfully assigned %s/%s to %s' % (
                    p['metadata']['namespace'], p['metadata']['name'], bname), 'default-scheduler')
                continue
            total = len(nodes)
            parts = sorted('%d %s' % (c, w) for w, c in reasons.items())
            pre = sorted(x for x in ['%d No preemption victims found for incoming pod' % nres if nres else '',
                                     '%d Preemption is not helpful for scheduling' % (total - nres)
                                     if total - nres else ''] if x)
            msg = '0/%d nodes are available: %s. preemption: 0/%d nodes are available: %s.' % (
                total, ', '.join(parts), total, ', '.join(pre)) if total else 'no nodes available to schedule pods'
            self.sched_tried[pu] = (now, msg)
            if set_condition(json.loads(st.get_raw('pods', p['metadata']['namespace'], p['metadata']['name'])),
                             'PodScheduled', 'False', 'Unschedulable', msg):
                self.store.update('pods', p['metadata']['namespace'], p['metadata']['name'],
                                  lambda o, msg=msg: set_condition(o, 'PodScheduled', 'False', 'Unschedulable', msg))
                self.emit(p, 'Pod', 'Warning', 'FailedScheduling', msg, 'default-scheduler')

    @staticmethod
    def free_score(req, node, used):
        alloc = node.get('status', {}).get('allocatable', {})
        score = 0.0
        for k in ('cpu', 'memory'):
            try:
                cap = parse_quantity(alloc.get(k, '0'))
            except ValueError:
                continue
            if cap > 0:
                score += (cap - used.get(k, 0) - req.get(k, 0)) / cap
        return score

    def reject(self, pod, req, node, used):
        """The scheduler's filter reasons for NODE (empty if it fits)."""
        sp, nsp = pod['spec'], node.get('spec', {})
        labels = node['metadata'].get('labels', {})
        if nsp.get('unschedulable'):
            return ['node(s) were unschedulable']
        for t in nsp.get('taints', []):
            if t.get('effect') in ('NoSchedule', 'NoExecute') and not tolerated(t, sp.get('tolerations', [])):
                return ['node(s) had untolerated taint {%s: %s}' % (t['key'], t.get('value', ''))]
        ready = next((c for c in node.get('status', {}).get('conditions', []) if c['type'] == 'Ready'), None)
        if ready is not None and ready.get('status') != 'True':
            return ['node(s) had untolerated taint {node.kubernetes.io/not-ready: }']
        if not node_affinity_ok(sp, labels, node['metadata']['name']):
            return ["node(s) didn't match Pod's node affinity/selector"]
        alloc = node.get('status', {}).get('allocatable', {})
        out = []
        if used.get('pods', 0) + 1 > parse_quantity(alloc.get('pods', '110')):
            out.append('Too many pods')
        for k, v in sorted(req.items()):
            if v <= 0:
                continue
            try:
                cap = parse_quantity(alloc.get(k, '0'))
            except ValueError:
                cap = 0
            if used.get(k, 0) + v > cap + 1e-9:
                out.append('Insufficient ' + k)
        return out



def tolerated(taint, tolerations):
    for t in tolerations or []:
        if t.get('effect') and t['effect'] != taint.get('effect'):
            continue
        op = t.get('operator', 'Equal')
        if not t.get('key') and op == 'Exists':
            return True
        if t.get('key') != taint.get('key'):
            continue
        if op == 'Exists' or (t.get('value', '') == taint.get('value', '')):
            return True
    return False


def _expr_ok(e, labels, name=None):
    k, op, vals = e.get('key'), e.get('operator'), e.get('values') or []
    v = name if name is not None else labels.get(k)
    has = name is not None or k in labels
    if op == 'In':
        return has and v in vals
    if op == 'NotIn':
        return not has or v not in vals
    if op == 'Exists':
        return has
    if op == 'DoesNotExist':
        return not has
    if op in ('Gt', 'Lt') and has and vals:
        try:
            return int(v) > int(vals[0]) if op == 'Gt' else int(v) < int(vals[0])
        except ValueError:
            return False
    return False


def node_affinity_ok(spec, labels, node_name):
    for k, v in (spec.get('nodeSelector') or {}).items():
        if labels.get(k) != v:
            return False
    if spec.get('nodeName') and spec['nodeName'] != node_name:
        return False
    req = ((spec.get('affinity') or {}).get('nodeAffinity') or {}).get(
        'requiredDuringSchedulingIgnoredDuringExecution') or {}
    terms = req.get('nodeSelectorTerms')
    if not terms:
        return True
    for term in terms:
        if all(_expr_ok(e, labels) for e in term.get('matchExpressions') or []) and \
                all(_expr_ok(e, labels, node_name) for e in term.get('matchFields') or []):
            return True
    return False
