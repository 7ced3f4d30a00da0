# The fake kubelet of the nodes listed in config.json: it runs the pods bound
# to them for real (kube_runtime.py + pod_launcher.py) and reports what a
# kubelet reports: pod IPs, container states (waiting ContainerCreating /
# ErrImagePull / ImagePullBackOff / CreateContainerConfigError /
# CrashLoopBackOff, running, terminated), restarts, conditions, phase. It
# kills containers of deleted pods (SIGTERM, SIGKILL after min(grace, 3 s)),
# and emulates evictions and node loss. sync() runs in the manager thread with
# the store lock held; the other entry points may run in HTTP threads (they
# only signal processes, never fork).
import json
import os
import pwd
import shutil
import signal
import sys
import time

import kube_runtime as rt
from kube_api import set_condition
from kube_faults import DISRUPTION_MESSAGES, EPOCH, KubeletFaults
from kube_util import parse_rfc3339, rfc3339

TERMINAL = ('Succeeded', 'Failed')


class CRec:
    def __init__(self, c, init):
        self.name, self.init, self.image = c['name'], init, c.get('image', '')
        self.proc, self.restarts, self.started_at = None, 0, None
        self.state = {'waiting': {'reason': 'ContainerCreating'}}
        self.last, self.exit, self.done, self.next_start = {}, None, False, 0.0
        self.ever_started = False


class PRec:
    def __init__(self, pod, root):
        md = pod['metadata']
        self.uid, self.ns, self.name = md['uid'], md['namespace'], md['name']
        self.dir = os.path.join(root, '%s_%s_%s' % (self.ns, self.name, self.uid))
        self.work = os.path.join(self.dir, 'work')
        self.sandbox, self.vols, self.ip = False, {}, pod.get('status', {}).get('podIP')
        self.cs = {}
        for c in pod['spec'].get('initContainers') or []:
            self.cs[c['name']] = CRec(c, True)
        for c in pod['spec'].get('containers') or []:
            self.cs[c['name']] = CRec(c, False)
        self.pull = {}              # container -> [failures, next try, showing backoff]
        self.killing, self.kill_deadline = False, 0.0
        self.disrupted, self.deadline_exceeded, self.events = None, False, set()

    def alive(self):
        return [c for c in self.cs.values() if c.proc is not None]

    def log_path(self, cname, n):
        return os.path.join(self.dir, 'logs', cname, '%d.log' % n)


class Kubelet(KubeletFaults):
    def __init__(self, store, api, cfg, emit):
        self.store, self.api, self.cfg, self.emit = store, api, cfg, emit
        self.root = cfg['pod_root']
        self.nodes = {n['name'] for n in cfg.get('nodes', [])}
        self.known = {rt.normalize_image(i) for i in cfg.get('images', [])}
        self.hidden = list(cfg.get('hide', []))
        self.user = cfg['user']
        self.port = cfg['port']
        self.crash_backoff = float(cfg.get('crash_backoff_seconds', 1))
        self.image_backoff = float(cfg.get('image_backoff_seconds', 10))
        self.pods, self.lost_nodes, self.next_ip = {}, set(), 0
        os.makedirs(self.root, exist_ok=True)
        os.chmod(self.root, 0o755)
        self.whiteouts = rt.make_whiteouts(cfg['dir'])

    # ------------------------------------------------------------ restart
    def recover(self):
        """After a server restart: the containers that were running died with
        it (parent-death signal). Their pods fail as a kubelet reports
        containers it cannot find."""
        for n in self.store.objects('nodes'):
            ready = next((c for c in n.get('status', {}).get('conditions', []) if c['type'] == 'Ready'), {})
            if n['metadata']['name'] in self.nodes and ready.get('status') != 'True':
                self.lost_nodes.add(n['metadata']['name'])
        for p in self.store.objects('pods'):
            self.next_ip = max(self.next_ip, rt.ip_index(p.get('status', {}).get('podIP')) + 1)
            if p['spec'].get('nodeName') not in self.nodes or p.get('status', {}).get('phase') in TERMINAL:
                continue
            md = p['metadata']
            started = any('running' in (s.get('state') or {}) or 'terminated' in (s.get('state') or {})
                          for s in p['status'].get('containerStatuses', []) + p['status'].get(
                              'initContainerStatuses', []))
            if md.get('deletionTimestamp'):
                self.store.remove('pods', md['namespace'], md['name'])
            elif started:
                self.store.update('pods', md['namespace'], md['name'], lambda o: self._mark_lost(o, None))

    # --------------------------------------------------------------- sync
    def sync(self):
        objs = {p['metadata']['uid']: p for p in self.store.objects('pods')
                if p.get('spec', {}).get('nodeName') in self.nodes}
        for rec in self.pods.values():
            for c in rec.cs.values():
                if c.proc is not None and c.proc.poll() is not None:
                    self._exited(rec, c, objs.get(rec.uid))
        for uid in list(self.pods):
            if uid not in objs:
                rec = self.pods[uid]
                if self._kill(rec, 0):
                    continue
                shutil.rmtree(rec.dir, ignore_errors=True)
                del self.pods[uid]
        # Sandboxes (pod IPs) first and the hosts files written before any
        # container of this pass starts, so that pods started together see
        # each other from their first instruction.
        for uid, p in objs.items():
            if p['spec']['nodeName'] in self.lost_nodes or p['metadata'].get('deletionTimestamp') or \
                    p.get('status', {}).get('phase') in TERMINAL:
                continue
            rec = self.pods.get(uid)
            if rec is None:
                rec = self.pods[uid] = PRec(p, self.root)
            if not rec.sandbox:
                self._sandbox(p, rec)
        self._update_hosts(objs)
        for uid, p in objs.items():
            rec = self.pods.get(uid)
            if p['spec']['nodeName'] in self.lost_nodes:
                if rec:
                    self._kill(rec, 0)
                continue
            if p['metadata'].get('deletionTimestamp'):
                self._terminate(p, rec)
                continue
            if p.get('status', {}).get('phase') in TERMINAL:
                if rec:
                    self._kill(rec, 0)
                continue
            if rec is None:
                rec = self.pods[uid] = PRec(p, self.root)
            self._advance(p, rec)
        self._update_hosts(objs)

    def _kill(self, rec, grace):
        """SIGTERM now, SIGKILL after min(grace, 3 s). True while alive."""
        alive = rec.alive()
        if not alive:
            return False
        now = time.monotonic()
        if not rec.killing:
            rec.killing, rec.kill_deadline = True, now + min(max(grace, 0), 3)
            for c in alive:
                c.proc.signal(signal.SIGTERM)
        if now >= rec.kill_deadline:
            for c in alive:
                c.proc.signal(signal.SIGKILL)
        return True

    def _exited(self, rec, c, pod):
        code, err = c.proc.exit, c.proc.error
        term = {'exitCode': code if not err else 128,
                'reason': 'StartError' if err else ('Completed' if code == 0 else 'Error'),
                'startedAt': c.started_at if not err else EPOCH, 'finishedAt': rfc3339(),
                'containerID': rt.container_id(rec.uid, c.name, c.restarts)}
        if err:
            term['message'] = err
        c.proc, c.exit, c.state = None, term['exitCode'], {'terminated': term}
        policy = (pod or {}).get('spec', {}).get('restartPolicy', 'Never')
        again = not rec.killing and not rec.disrupted and not rec.deadline_exceeded and pod is not None and \
            (policy == 'Always' or (policy == 'OnFailure' and term['exitCode'] != 0))
        if again:
            c.next_start = time.monotonic() + min(self.crash_backoff * 2 ** c.restarts, 300)
        else:
            c.done = True
        if pod is not None and term['exitCode'] != 0 and not rec.killing:
            self.emit(pod, 'Pod', 'Warning', 'BackOff' if again else 'Failed',
                      ('Back-off restarting failed container %s in pod %s_%s(%s)' % (c.name, rec.name, rec.ns,
                                                                                    rec.uid)) if again else
                      'Error: %s' % (err or 'container exited with code %d' % code), 'kubelet')

    def _terminate(self, p, rec):
        grace = p['metadata'].get('deletionGracePeriodSeconds', 30)
        if rec is not None and self._kill(rec, grace):
            if rec.kill_deadline and not rec.events & {'Killing'}:
                rec.events.add('Killing')
                for c in rec.alive():
                    self.emit(p, 'Pod', 'Normal', 'Killing', 'Stopping container %s' % c.name, 'kubelet')
            return
        md = p['metadata']
        if rec is not None:
            self.store.update('pods', md['namespace'], md['name'], lambda o: self._status(o, rec, final=True))
        self.store.remove('pods', md['namespace'], md['name'])
        if rec is not None:
            shutil.rmtree(rec.dir, ignore_errors=True)
            self.pods.pop(rec.uid, None)

    # ------------------------------------------------------------ advance
    def _advance(self, p, rec):
        md, spec = p['metadata'], p['spec']
        ns, name = md['namespace'], md['name']
        now = time.monotonic()
        if rec.disrupted or rec.deadline_exceeded:
            if not self._kill(rec, spec.get('terminationGracePeriodSeconds', 30)):
                self.store.update('pods', ns, name, lambda o: self._status(o, rec, final=True))
            return
        ads = spec.get('activeDeadlineSeconds')
        st = p.get('status', {})
        if ads and st.get('startTime') and time.time() >= _ts(st['startTime']) + ads:
            rec.deadline_exceeded = True
            self.emit(p, 'Pod', 'Normal', 'DeadlineExceeded', 'Pod was active on the node longer than the '
                      'specified deadline', 'kubelet')
            return
        if not rec.sandbox and not self._sandbox(p, rec):
            self.store.update('pods', ns, name, lambda o: self._status(o, rec))
            return
        blocked = False
        for c in (spec.get('initContainers') or []) + spec.get('containers', []):
            if rt.normalize_image(c.get('image', '')) not in self.known:
                self._pull_failure(p, rec, c)
                blocked = True
        if not blocked:
            for c in spec.get('initContainers') or []:
                cr = rec.cs[c['name']]
                if cr.done and cr.exit == 0:
                    continue
                if cr.done:      # failed init container, restartPolicy Never
                    break
                if cr.proc is None and now >= cr.next_start:
                    self._start(p, rec, c, cr)
                break
            else:
                for c in spec.get('containers', []):
                    cr = rec.cs[c['name']]
                    if cr.proc is None and not cr.done and now >= cr.next_start:
                        self._start(p, rec, c, cr)
        self.store.update('pods', ns, name, lambda o: self._status(o, rec))

    def _sandbox(self, p, rec):
        try:
            os.makedirs(os.path.join(rec.dir, 'logs'), exist_ok=True)
            os.makedirs(rec.work, exist_ok=True)
            os.chmod(rec.dir, 0o755)
            u = pwd.getpwnam(self.user)
            os.chown(rec.work, u.pw_uid, u.pw_gid)
            if not rec.ip:
                rec.ip = rt.ip_of(self.next_ip)
                self.next_ip += 1
            rec.vols = rt.prepare_volumes(self.store, _with_ip(p, rec.ip), rec.dir, u.pw_uid, u.pw_gid)
        except rt.ConfigError as e:
            msg = str(e)
            if msg not in rec.events:
                rec.events.add(msg)
                self.emit(p, 'Pod', 'Warning', 'FailedMount', msg, 'kubelet')
            return False
        rt.write_in_place(os.path.join(rec.dir, 'hostname'), rt.pod_hostname(p) + '\n')
        rec.sandbox = True
        return True

    def _pull_failure(self, p, rec, c):
        now = time.monotonic()
        st = rec.pull.setdefault(c['name'], [0, 0.0, False, 0.0])
        img = c.get('image', '')
        full = rt.normalize_image(img)
        cr = rec.cs[c['name']]
        if now >= st[1]:
            st[0] += 1
            st[1] = now + min(self.image_backoff * 2 ** (st[0] - 1), 300)
            st[2] = False
            why = ('rpc error: code = NotFound desc = failed to pull and unpack image "%s": failed to resolve '
                   'reference "%s": %s: not found' % (full, full, full))
            cr.state = {'waiting': {'reason': 'ErrImagePull', 'message': why}}
            self.emit(p, 'Pod', 'Normal', 'Pulling', 'Pulling image "%s"' % img, 'kubelet')
            self.emit(p, 'Pod', 'Warning', 'Failed', 'Failed to pull image "%s": %s' % (img, why), 'kubelet')
            self.emit(p, 'Pod', 'Warning', 'Failed', 'Error: ErrImagePull', 'kubelet')
            st[3] = now + 1.0
        elif not st[2] and now >= st[3]:
            st[2] = True
            cr.state = {'waiting': {'reason': 'ImagePullBackOff', 'message': 'Back-off pulling image "%s"' % img}}
            self.emit(p, 'Pod', 'Normal', 'BackOff', 'Back-off pulling image "%s"' % img, 'kubelet')
            self.emit(p, 'Pod', 'Warning', 'Failed', 'Error: ImagePullBackOff', 'kubelet')

    def _start(self, p, rec, c, cr):
        if cr.ever_started:
            cr.restarts += 1
            cr.last = cr.state if 'terminated' in cr.state else {}
        try:
            env = rt.container_env(self.store, _with_ip(p, rec.ip), c, rec.work, self.port)
        except rt.ConfigError as e:
            cr.state = {'waiting': {'reason': 'CreateContainerConfigError', 'message': str(e)}}
            if cr.ever_started:
                cr.restarts -= 1
            return
        argv = [rt.expand(a, env) for a in (c.get('command') or []) + (c.get('args') or [])]
        cr.ever_started = True
        log = rec.log_path(c['name'], cr.restarts)
        os.makedirs(os.path.dirname(log), exist_ok=True)
        open(log, 'ab').close()
        cr.started_at = rfc3339()
        if not argv:
            msg = ('failed to create containerd task: failed to create shim task: OCI runtime create failed: '
                   'runc create failed: unable to start container process: exec: no command: the kappa fake '
                   'kubelet needs a container command or args (image entrypoints and default commands are not '
                   'emulated): unknown')
            cr.proc = _Failed(msg)
            self.emit(p, 'Pod', 'Warning', 'Failed', 'Error: ' + msg, 'kubelet')
            return
        hosts = os.path.join(rec.dir, 'hosts')
        if not os.path.exists(hosts):
            rt.write_in_place(hosts, rt.hosts_file(_with_ip(p, rec.ip), []))
        spec = {'hostname': rt.pod_hostname(p), 'hide_dirs': self.whiteouts, 'hidden_paths': self.hidden,
                'hosts_file': hosts, 'hostname_file': os.path.join(rec.dir, 'hostname'),
                'mounts': rt.mounts_for(c, rec.vols), 'user': self.user, 'argv': argv, 'env': env,
                'cwd': c.get('workingDir') or rec.work, 'log': log,
                'created_log': os.path.join(self.cfg['dir'], 'created-on-host.txt')}
        cr.proc = rt.launch(self.cfg['dir'], spec, os.path.join(rec.dir, 'launcher.err'))
        sys.stderr.write('%s kubelet: started %s/%s container %s (restart %d) on %s, pid %d, ip %s\n' % (
            time.strftime('%H:%M:%S'), rec.ns, rec.name, c['name'], cr.restarts, p['spec'].get('nodeName'),
            cr.proc.popen.pid, rec.ip))
        cr.state = {'running': {'startedAt': cr.started_at}}
        if cr.restarts == 0:
            self.emit(p, 'Pod', 'Normal', 'Pulled', 'Container image "%s" already present on machine' % c['image'],
                      'kubelet')
        self.emit(p, 'Pod', 'Normal', 'Created', 'Created container: %s' % c['name'], 'kubelet')
        self.emit(p, 'Pod', 'Normal', 'Started', 'Started container %s' % c['name'], 'kubelet')

    # ------------------------------------------------------------- status
    def _status(self, o, rec, final=False):
        spec, st = o['spec'], o.setdefault('status', {})
        now_m = time.monotonic()
        if rec.sandbox:
            st['hostIP'] = '127.0.0.1'
            st['hostIPs'] = [{'ip': '127.0.0.1'}]
            st['podIP'] = rec.ip
            st['podIPs'] = [{'ip': rec.ip}]
            st.setdefault('startTime', rfc3339())
        else:
            st.setdefault('startTime', rfc3339())
        lists = {}
        for key, cs in (('initContainerStatuses', spec.get('initContainers') or []),
                        ('containerStatuses', spec.get('containers') or [])):
            out = []
            for c in cs:
                cr = rec.cs[c['name']]
                state = cr.state
                if 'terminated' in state and not cr.done and cr.proc is None and now_m < cr.next_start:
                    state = {'waiting': {'reason': 'CrashLoopBackOff', 'message': 'back-off %ds restarting failed '
                                         'container=%s pod=%s_%s(%s)' % (
                                             min(self.crash_backoff * 2 ** cr.restarts, 300), c['name'], rec.name,
                                             rec.ns, rec.uid)}}
                running = 'running' in state
                s = {'name': c['name'], 'state': state, 'lastState': cr.last, 'ready': running,
                     'restartCount': cr.restarts, 'image': rt.normalize_image(c.get('image', '')),
                     'imageID': rt.image_id(c.get('image', '')) if cr.ever_started else '', 'started': running}
                if cr.ever_started:
                    s['containerID'] = rt.container_id(rec.uid, c['name'], cr.restarts)
                if cr.init:
                    s['ready'] = cr.done and cr.exit == 0
                out.append(s)
            if out:
                lists[key] = out
        st.update(lists)
        inits = lists.get('initContainerStatuses', [])
        mains = lists.get('containerStatuses', [])
        init_done = all(rec.cs[s['name']].done and rec.cs[s['name']].exit == 0 for s in inits)
        init_failed = any(rec.cs[s['name']].done and rec.cs[s['name']].exit != 0 for s in inits)
        all_done = all(rec.cs[s['name']].done for s in mains) and mains
        any_started = any(rec.cs[s['name']].ever_started for s in mains)
        phase = 'Pending'
        if init_failed or (final and not all_done and rec.cs and any(c.ever_started for c in rec.cs.values())):
            phase = 'Failed'
        elif all_done:
            phase = 'Succeeded' if all(rec.cs[s['name']].exit == 0 for s in mains) else 'Failed'
        elif any_started and init_done:
            phase = 'Running'
        if (rec.disrupted or rec.deadline_exceeded) and final:
            phase = 'Failed'
        if final and phase in ('Pending', 'Running'):
            phase = 'Failed'
        st['phase'] = phase
        if rec.deadline_exceeded:
            st['reason'], st['message'] = 'DeadlineExceeded', \
                'Pod was active on the node longer than the specified deadline'
        if rec.disrupted == 'TerminationByKubelet':
            st['reason'], st['message'] = 'Evicted', DISRUPTION_MESSAGES['TerminationByKubelet']
        set_condition(o, 'PodReadyToStartContainers', 'True' if rec.sandbox and phase not in TERMINAL else 'False')
        if init_done:
            set_condition(o, 'Initialized', 'True')
        else:
            set_condition(o, 'Initialized', 'False', 'ContainersNotInitialized', 'containers with incomplete '
                          'status: [%s]' % ' '.join(s['name'] for s in inits if not s['ready']))
        unready = [s['name'] for s in mains if not s['ready']]
        for ctype in ('Ready', 'ContainersReady'):
            if phase in TERMINAL:
                set_condition(o, ctype, 'False', 'PodCompleted' if phase == 'Succeeded' else 'PodFailed')
            elif unready:
                set_condition(o, ctype, 'False', 'ContainersNotReady', 'containers with unready status: [%s]'
                              % ' '.join(unready))
            else:
                set_condition(o, ctype, 'True')
        order = {'PodReadyToStartContainers': 0, 'Initialized': 1, 'Ready': 2, 'ContainersReady': 3,
                 'PodScheduled': 4, 'DisruptionTarget': 5}
        st['conditions'].sort(key=lambda c: order.get(c['type'], 9))

    def _update_hosts(self, objs):
        groups = {}
        for uid, p in objs.items():
            rec = self.pods.get(uid)
            if rec is None or not rec.sandbox:
                continue
            sub = p['spec'].get('subdomain')
            if sub and p.get('status', {}).get('phase') not in TERMINAL and rt.headless_service(self.store, p):
                groups.setdefault((p['metadata']['namespace'], sub), []).append((rec.ip, rt.pod_hostname(p)))
        for uid, rec in self.pods.items():
            p = objs.get(uid)
            if p is None or not rec.sandbox:
                continue
            peers = groups.get((p['metadata']['namespace'], p['spec'].get('subdomain')), []) \
                if p['spec'].get('subdomain') else []
            rt.write_in_place(os.path.join(rec.dir, 'hosts'), rt.hosts_file(_with_ip(p, rec.ip), peers))

    # -------------------------------------------- calls from other threads
    def forget(self, uid):
        """The pod object is gone (force deletion): sync() kills what is left."""

    def kill_all(self, wait=5.0):
        """Server shutdown: every container goes."""
        with self.store.lock:
            recs = list(self.pods.values())
        for rec in recs:
            for c in rec.alive():
                c.proc.signal(signal.SIGTERM)
        end = time.monotonic() + min(wait, 3)
        while time.monotonic() < end and any(c.proc.popen.poll() is None for r in recs for c in r.alive()
                                             if hasattr(c.proc, 'popen')):
            time.sleep(0.05)
        for rec in recs:
            for c in rec.alive():
                c.proc.signal(signal.SIGKILL)

    def process_table(self):
        with self.store.lock:
            return {'processes': [{'pod': '%s/%s' % (r.ns, r.name), 'container': c.name, 'launcherPid':
                                   c.proc.popen.pid, 'containerPids': c.proc.container_pids()}
                                  for r in self.pods.values() for c in r.alive() if hasattr(c.proc, 'popen')]}

class _Failed:
    """A container that could not start: exits at once with code 128."""

    def __init__(self, msg):
        self.exit, self.error = 128, msg

    def poll(self):
        return 128

    def signal(self, sig):
        pass

    def container_pids(self):
        return []


def _with_ip(p, ip):
    q = json.loads(json.dumps(p))
    q.setdefault('status', {})['podIP'] = ip
    return q


def _ts(s):
    return parse_rfc3339(s) or 0

