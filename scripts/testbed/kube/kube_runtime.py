# The container runtime side of the fake kubelet: pod folders, pod IPs, the
# kubelet-managed /etc/hosts (with the cluster-DNS names of headless-Service
# peers), volumes (emptyDir, configMap, secret, downwardAPI, projected,
# hostPath), the container environment, image names, and starting / killing
# containers through pod_launcher.py.
import base64
import glob
import hashlib
import json
import os
import pwd
import re
import shutil
import signal
import stat
import subprocess

from kube_util import labels_match, parse_quantity, selector_from_label_selector

HERE = os.path.dirname(os.path.abspath(__file__))
LAUNCHER = os.path.join(HERE, 'pod_launcher.py')
SLURM_COMMANDS = ['srun', 'sbatch', 'squeue', 'scancel', 'sinfo', 'salloc', 'sacct', 'scontrol', 'sattach',
                  'sbcast', 'sstat', 'sprio', 'sshare', 'sreport', 'sacctmgr', 'sdiag', 'strigger', 'sview',
                  'scrontab', 'sh5util', 'sgather', 'sjstat', 'smap', 'seff']
DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
MARKER = 'SKYSLURM_KAPPA_DIR'


class ConfigError(Exception):
    """CreateContainerConfigError: a referenced ConfigMap/Secret/key is missing."""


def normalize_image(img):
    name = img
    if '@' not in name and ':' not in name.rsplit('/', 1)[-1]:
        name += ':latest'
    first = name.split('/', 1)[0]
    if '/' not in name:
        name = 'docker.io/library/' + name
    elif '.' not in first and ':' not in first and first != 'localhost':
        name = 'docker.io/' + name
    return name


def image_id(img):
    n = normalize_image(img)
    return '%s@sha256:%s' % (n.rsplit(':', 1)[0], hashlib.sha256(n.encode()).hexdigest())


def container_id(uid, name, n):
    return 'containerd://' + hashlib.sha256(('%s/%s/%d' % (uid, name, n)).encode()).hexdigest()


def ip_of(n):
    """Pod IP number N: 127.0.1.2 ... 127.0.1.254, 127.0.2.2 ..."""
    a, b = divmod(n, 253)
    hi, mid = divmod(a, 254)
    return '127.%d.%d.%d' % (hi, mid + 1, b + 2)


def ip_index(ip):
    m = re.match(r'^127\.(\d+)\.(\d+)\.(\d+)$', ip or '')
    if not m or m.group(1) == '0' and m.group(2) == '0':
        return -1
    return (int(m.group(1)) * 254 + int(m.group(2)) - 1) * 253 + int(m.group(3)) - 2


def make_whiteouts(root):
    """Whiteout folders for every folder that holds a Slurm client command:
    [(whiteouts, target)] for pod_launcher's read-only overlays."""
    dirs = {}
    path = os.environ.get('PATH', '') + ':/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin:/usr/local/sbin'
    for d in path.split(':'):
        if not d or not os.path.isdir(d):
            continue
        real = os.path.realpath(d)
        for c in SLURM_COMMANDS:
            if os.path.lexists(os.path.join(real, c)):
                dirs.setdefault(real, set()).add(c)
    out = []
    for i, (d, cmds) in enumerate(sorted(dirs.items())):
        wo = os.path.join(root, 'whiteouts', str(i))
        shutil.rmtree(wo, ignore_errors=True)
        os.makedirs(wo)
        for c in sorted(cmds):
            os.mknod(os.path.join(wo, c), stat.S_IFCHR | 0o000, os.makedev(0, 0))
        out.append([wo, d])
    return out


def write_in_place(path, data):
    """Rewrites a file keeping its inode, so bind mounts of it see the change."""
    data = data.encode()
    try:
        with open(path, 'rb') as f:
            if f.read() == data:
                return False
    except FileNotFoundError:
        pass
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        os.write(fd, data)
        os.ftruncate(fd, len(data))
    finally:
        os.close(fd)
    return True


def hosts_file(pod, peers, cluster_domain='cluster.local'):
    """The kubelet's /etc/hosts for POD; PEERS: [(ip, hostname)] of the pods
    that the headless Service named by its subdomain publishes."""
    sp, md = pod['spec'], pod['metadata']
    lines = ['# Kubernetes-managed hosts file.', '127.0.0.1\tlocalhost', '::1\tlocalhost ip6-localhost ip6-loopback',
             'fe00::0\tip6-localnet', 'fe00::0\tip6-mcastprefix', 'fe00::1\tip6-allnodes', 'fe00::2\tip6-allrouters']
    host, sub, ns = pod_hostname(pod), sp.get('subdomain'), md['namespace']
    ip = pod.get('status', {}).get('podIP')
    if sub:
        lines.append('%s\t%s.%s.%s.svc.%s\t%s.%s\t%s' % (ip, host, sub, ns, cluster_domain, host, sub, host))
    else:
        lines.append('%s\t%s' % (ip, host))
    seen = {host}
    if sub and peers:
        lines.append('# Cluster DNS (emulated): pods of the headless Service "%s".' % sub)
        for pip, ph in sorted(peers, key=lambda x: x[1]):
            if ph in seen:
                continue
            seen.add(ph)
            lines.append('%s\t%s.%s.%s.svc.%s\t%s.%s\t%s' % (pip, ph, sub, ns, cluster_domain, ph, sub, ph))
    if sp.get('hostAliases'):
        lines.append('')
        lines.append('# Entries added by HostAliases.')
        for a in sp['hostAliases']:
            lines.append('%s\t%s' % (a.get('ip', ''), '\t'.join(a.get('hostnames') or [])))
    return '\n'.join(lines) + '\n'


def pod_hostname(pod):
    return (pod['spec'].get('hostname') or pod['metadata']['name'])[:63].rstrip('-.')


def headless_service(store, pod):
    """The headless Service named by the pod's subdomain that selects it."""
    sub = pod['spec'].get('subdomain')
    if not sub:
        return None
    svc = store.peek('services', pod['metadata']['namespace'], sub)
    if svc is None or svc.get('spec', {}).get('clusterIP') != 'None':
        return None
    sel = svc['spec'].get('selector') or {}
    if sel and not labels_match(selector_from_label_selector({'matchLabels': sel}),
                                pod['metadata'].get('labels')):
        return None
    return svc

# ------------------------------------------------------------------ fields


def field_value(pod, path, node_ip='127.0.0.1'):
    md, sp, st = pod['metadata'], pod['spec'], pod.get('status', {})
    m = re.match(r"^metadata\.(labels|annotations)\['([^']+)'\]$", path)
    if m:
        return (md.get(m.group(1)) or {}).get(m.group(2), '')
    simple = {'metadata.name': md.get('name', ''), 'metadata.namespace': md.get('namespace', ''),
              'metadata.uid': md.get('uid', ''), 'spec.nodeName': sp.get('nodeName', ''),
              'spec.serviceAccountName': sp.get('serviceAccountName', ''), 'status.podIP': st.get('podIP', ''),
              'status.podIPs': st.get('podIP', ''), 'status.hostIP': node_ip, 'status.hostIPs': node_ip}
    if path in simple:
        return simple[path]
    if path in ('metadata.labels', 'metadata.annotations'):
        d = md.get(path.split('.')[1]) or {}
        return '\n'.join('%s="%s"' % (k, v) for k, v in sorted(d.items()))
    raise ConfigError('unsupported fieldPath: %s' % path)


def resource_value(pod, ref, cname):
    c = next((x for x in pod['spec'].get('containers', []) if x['name'] == (ref.get('containerName') or cname)),
             {})
    kind, _, res = ref.get('resource', '').partition('.')
    r = c.get('resources') or {}
    val = (r.get(kind) or {}).get(res)
    if val is None:
        val = {'cpu': '64', 'memory': str(512 * 2**30)}.get(res, '0') if kind == 'limits' else '0'
    div = parse_quantity(ref.get('divisor') or '1')
    q = parse_quantity(val) / div
    return str(int(q) if q == int(q) else int(q) + 1)


def _cm_or_secret(store, ns, kind, name, optional, files=False):
    """{key: value}: str for the environment; for a volume's FILES, bytes where
    the object holds bytes (a Secret's data, a ConfigMap's binaryData keys)."""
    res = 'configmaps' if kind == 'configMap' else 'secrets'
    o = store.peek(res, ns, name)
    if o is None:
        if optional:
            return None
        raise ConfigError('%s "%s" not found' % ('configmap' if res == 'configmaps' else 'secret', name))
    data = dict(o.get('data') or {})
    if res == 'secrets':
        data = {k: base64.b64decode(v) if files else base64.b64decode(v).decode(errors='replace')
                for k, v in data.items()}
    elif files:   # a ConfigMap's binaryData keys are files too, of their decoded bytes
        data.update({k: base64.b64decode(v) for k, v in (o.get('binaryData') or {}).items()})
    return data


def expand(s, env):
    """Kubernetes $(VAR) expansion ($$ escapes)."""
    return re.sub(r'\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)',
                  lambda m: '$' if m.group(0) == '$$' else env.get(m.group(1), m.group(0)), s)


def container_env(store, pod, c, home, api_port):
    """Exactly the container's environment (nothing from the host)."""
    ns = pod['metadata']['namespace']
    env = {'PATH': DEFAULT_PATH, 'HOSTNAME': pod_hostname(pod), 'HOME': home,
           'KUBERNETES_SERVICE_HOST': '127.0.0.1', 'KUBERNETES_SERVICE_PORT': str(api_port),
           'KUBERNETES_SERVICE_PORT_HTTPS': str(api_port), 'KUBERNETES_PORT': 'tcp://127.0.0.1:%s' % api_port,
           'KUBERNETES_PORT_443_TCP': 'tcp://127.0.0.1:%s' % api_port, 'KUBERNETES_PORT_443_TCP_PROTO': 'tcp',
           'KUBERNETES_PORT_443_TCP_PORT': str(api_port), 'KUBERNETES_PORT_443_TCP_ADDR': '127.0.0.1'}
    for ef in c.get('envFrom') or []:
        for kind, key in (('configMap', 'configMapRef'), ('secret', 'secretRef')):
            ref = ef.get(key)
            if ref:
                data = _cm_or_secret(store, ns, kind, ref.get('name', ''), ref.get('optional'))
                for k, v in (data or {}).items():
                    env[ef.get('prefix', '') + k] = v
    for e in c.get('env') or []:
        name, vf = e.get('name'), e.get('valueFrom')
        if vf is None:
            env[name] = expand(e.get('value', ''), env)
        elif vf.get('fieldRef'):
            env[name] = field_value(pod, vf['fieldRef'].get('fieldPath', ''))
        elif vf.get('resourceFieldRef'):
            env[name] = resource_value(pod, vf['resourceFieldRef'], c['name'])
        else:
            kind, ref = ('configMap', vf['configMapKeyRef']) if vf.get('configMapKeyRef') else \
                ('secret', vf.get('secretKeyRef') or {})
            data = _cm_or_secret(store, ns, kind, ref.get('name', ''), ref.get('optional'))
            if data is None:
                continue
            if ref.get('key') not in data:
                if ref.get('optional'):
                    continue
                raise ConfigError("couldn't find key %s in %s %s/%s" % (
                    ref.get('key'), 'ConfigMap' if kind == 'configMap' else 'Secret', ns, ref.get('name')))
            env[name] = data[ref['key']]
    return env

# ----------------------------------------------------------------- volumes


def _write_items(vdir, data, items, mode):
    pairs = [(i['key'], i.get('path', i['key']), i.get('mode', mode)) for i in items] if items else \
        [(k, k, mode) for k in data]
    for key, path, m in pairs:
        if key not in data:
            raise ConfigError('configmap references non-existent config key: %s' % key)
        p = os.path.join(vdir, path)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        value = data[key]
        with open(p, 'wb') as f:
            f.write(value if isinstance(value, bytes) else value.encode())
        os.chmod(p, m)


def prepare_volumes(store, pod, pdir, uid, gid):
    """Materializes the pod's volumes under PDIR/volumes: {name: host path}.
    Raises ConfigError (the kubelet's FailedMount) if a source is missing."""
    ns, out = pod['metadata']['namespace'], {}
    for v in pod['spec'].get('volumes') or []:
        name = v['name']
        vdir = os.path.join(pdir, 'volumes', name)
        if 'hostPath' in v:
            hp = v['hostPath']
            if hp.get('type') == 'DirectoryOrCreate':
                os.makedirs(hp['path'], exist_ok=True)
            if not os.path.exists(hp['path']):
                raise ConfigError('hostPath type check failed: %s is not a directory' % hp['path'])
            out[name] = hp['path']
            continue
        os.makedirs(vdir, exist_ok=True)
        out[name] = vdir
        sources = []
        if 'configMap' in v or 'secret' in v:
            kind = 'configMap' if 'configMap' in v else 'secret'
            src = v[kind]
            sources.append((kind, src.get('name') or src.get('secretName', ''), src.get('items'),
                            src.get('optional'), src.get('defaultMode', 420)))
        elif 'projected' in v:
            mode = v['projected'].get('defaultMode', 420)
            for s in v['projected'].get('sources') or []:
                for kind in ('configMap', 'secret'):
                    if kind in s:
                        sources.append((kind, s[kind].get('name', ''), s[kind].get('items'), s[kind].get('optional'),
                                        mode))
                if 'downwardAPI' in s:
                    sources.append(('downwardAPI', '', s['downwardAPI'].get('items'), False, mode))
        elif 'downwardAPI' in v:
            sources.append(('downwardAPI', '', v['downwardAPI'].get('items'), False,
                            v['downwardAPI'].get('defaultMode', 420)))
        else:   # emptyDir and everything without a source of its own
            os.chmod(vdir, 0o777)
            continue
        for kind, sname, items, optional, mode in sources:
            if kind == 'downwardAPI':
                for it in items or []:
                    p = os.path.join(vdir, it['path'])
                    os.makedirs(os.path.dirname(p), exist_ok=True)
                    with open(p, 'w') as f:
                        f.write(field_value(pod, it['fieldRef']['fieldPath']) if it.get('fieldRef') else
                                resource_value(pod, it.get('resourceFieldRef', {}), ''))
                    os.chmod(p, it.get('mode', mode))
                continue
            try:
                data = _cm_or_secret(store, ns, kind, sname, optional, files=True)
            except ConfigError as e:
                raise ConfigError('MountVolume.SetUp failed for volume "%s" : %s' % (name, e))
            if data is not None:
                _write_items(vdir, data, items, mode)
        os.chmod(vdir, 0o755)
    return out


def mounts_for(c, vols):
    out = []
    for m in c.get('volumeMounts') or []:
        src = vols.get(m['name'])
        if src is None:
            continue
        if m.get('subPath'):
            src = os.path.join(src, m['subPath'])
            if not os.path.exists(src):
                os.makedirs(src, exist_ok=True)
        out.append({'source': src, 'target': m['mountPath'], 'readOnly': bool(m.get('readOnly'))})
    return out

# ---------------------------------------------------------------- processes


class Proc:
    """One running container: its launcher and the pipe for exec errors."""

    def __init__(self, popen, status_r, log):
        self.popen, self.status_r, self.log = popen, status_r, log
        self.exit, self.error = None, None

    def poll(self):
        if self.exit is not None:
            return self.exit
        rc = self.popen.poll()
        if rc is None:
            return None
        msg = b''
        try:
            while True:
                chunk = os.read(self.status_r, 65536)
                if not chunk:
                    break
                msg += chunk
        except BlockingIOError:
            pass
        os.close(self.status_r)
        self.error = msg.decode(errors='replace') or None
        self.exit = rc if rc >= 0 else 128 - rc
        return self.exit

    def container_pids(self):
        pids = []
        for f in glob.glob('/proc/%d/task/*/children' % self.popen.pid):
            try:
                pids += [int(x) for x in open(f).read().split()]
            except OSError:
                pass
        return pids

    def signal(self, sig):
        if self.popen.poll() is not None:
            return
        try:
            if sig == signal.SIGKILL:
                for pid in self.container_pids():
                    os.kill(pid, signal.SIGKILL)
            os.kill(self.popen.pid, sig)
        except ProcessLookupError:
            pass


def launch(kdir, spec, launcher_err):
    """Starts one container (called from the kubelet's long-lived thread)."""
    pw = pwd.getpwnam(spec['user'])
    spec = dict(spec, uid=pw.pw_uid, gid=pw.pw_gid)
    path = spec['log'][:-4] + '.spec.json'
    with open(path, 'w') as f:
        json.dump(spec, f)
    r, w = os.pipe()
    os.set_blocking(r, False)
    with open(launcher_err, 'ab') as err:
        p = subprocess.Popen(['/usr/bin/python3', '-I', '-S', LAUNCHER, path, str(os.getpid()), str(w)],
                             pass_fds=(w,), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                             start_new_session=True, env={MARKER: kdir, 'PATH': DEFAULT_PATH}, close_fds=True)
    os.close(w)
    return Proc(p, r, spec['log'])

