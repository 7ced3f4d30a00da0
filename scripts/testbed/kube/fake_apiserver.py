#!/usr/bin/python3
# kappa: a fake Kubernetes API server for the skyslurm testbed (test
# infrastructure only, never installed). See README.md in this folder.
#
#   fake_apiserver.py setup --dir DIR [--port 7310] [--user skyuser1] [--hide PATH ...]
#   fake_apiserver.py serve --config DIR/config.json [--synthetic-nodes N --synthetic-pods M]
#
# setup (idempotent) makes a CA and a server certificate with openssl, a bearer
# token, DIR/config.json and DIR/kubeconfig (cluster, context and user "kappa").
# serve runs the HTTPS API server with its controllers and its kubelet; it must
# run as root (the kubelet unshares namespaces and switches to the user).
import argparse
import base64
import json
import os
import platform
import secrets
import signal
import subprocess
import sys
import threading
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import kube_http  # noqa: E402
from kube_api import Api  # noqa: E402
from kube_controllers import Controllers  # noqa: E402
from kube_kubelet import Kubelet  # noqa: E402
from kube_store import Store  # noqa: E402
from kube_util import rfc3339  # noqa: E402

DEFAULT_NODES = [
    {'name': 'kappa-n1', 'gpus': 8, 'product': 'NVIDIA-H100-80GB-HBM3', 'cpu': '64', 'memory': '512Gi'},
    {'name': 'kappa-n2', 'gpus': 8, 'product': 'NVIDIA-H100-80GB-HBM3', 'cpu': '64', 'memory': '512Gi'},
    {'name': 'kappa-n3', 'gpus': 4, 'product': 'NVIDIA-L4', 'cpu': '16', 'memory': '64Gi'},
]
DEFAULT_IMAGES = ['ubuntu:22.04', 'ubuntu:24.04', 'nvcr.io/nvidia/pytorch:24.01-py3', 'busybox:1.36',
                  'python:3.11-slim']

# ---------------------------------------------------------------------- setup


def run(cmd):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def make_certs(d):
    ca_key, ca_crt = os.path.join(d, 'ca.key'), os.path.join(d, 'ca.crt')
    key, crt = os.path.join(d, 'server.key'), os.path.join(d, 'server.crt')
    if not (os.path.exists(ca_key) and os.path.exists(ca_crt)):
        run(['openssl', 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', ca_key, '-out', ca_crt,
             '-days', '3650', '-subj', '/CN=kappa-ca', '-addext', 'basicConstraints=critical,CA:TRUE',
             '-addext', 'keyUsage=critical,keyCertSign,cRLSign,digitalSignature'])
    if not (os.path.exists(key) and os.path.exists(crt)):
        csr, ext = os.path.join(d, 'server.csr'), os.path.join(d, 'server.ext')
        with open(ext, 'w') as f:
            f.write('basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n'
                    'extendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,'
                    'DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local\n')
        run(['openssl', 'req', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', csr,
             '-subj', '/CN=kube-apiserver'])
        run(['openssl', 'x509', '-req', '-in', csr, '-CA', ca_crt, '-CAkey', ca_key, '-CAcreateserial',
             '-out', crt, '-days', '3650', '-extfile', ext])
        os.unlink(csr)
    for p in (ca_key, key):
        os.chmod(p, 0o600)
    return ca_crt, crt, key


def setup(args):
    d = os.path.abspath(args.dir)
    os.makedirs(d, exist_ok=True)
    os.chmod(d, 0o755)
    ca_crt, crt, key = make_certs(d)
    tok_path = os.path.join(d, 'token')
    if not os.path.exists(tok_path):
        fd = os.open(tok_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.write(fd, (secrets.token_hex(24) + '\n').encode())
        os.close(fd)
    token = open(tok_path).read().strip()
    cfg_path = os.path.join(d, 'config.json')
    old = json.load(open(cfg_path)) if os.path.exists(cfg_path) else {}
    cfg = dict(old)
    cfg.update({'dir': d, 'port': args.port, 'user': args.user, 'token_file': tok_path, 'ca': ca_crt,
                'cert': crt, 'key': key, 'pod_root': os.path.join(d, 'pods'),
                'hide': [os.path.abspath(h) for h in args.hide or []]})
    cfg.setdefault('nodes', DEFAULT_NODES)
    cfg.setdefault('images', DEFAULT_IMAGES)
    cfg.setdefault('job_backoff_seconds', 1)
    cfg.setdefault('crash_backoff_seconds', 1)
    cfg.setdefault('image_backoff_seconds', 10)
    cfg.setdefault('bookmark_seconds', 10)
    cfg.setdefault('extended_resource_toleration', True)
    tmp = cfg_path + '.tmp'
    with open(tmp, 'w') as f:
        json.dump(cfg, f, indent=2)
        f.write('\n')
    os.replace(tmp, cfg_path)
    ca_b64 = base64.b64encode(open(ca_crt, 'rb').read()).decode()
    kc = ('apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    certificate-authority-data: %s\n'
          '    server: https://127.0.0.1:%d\n  name: kappa\ncontexts:\n- context:\n    cluster: kappa\n'
          '    namespace: default\n    user: kappa\n  name: kappa\ncurrent-context: kappa\npreferences: {}\n'
          'users:\n- name: kappa\n  user:\n    token: %s\n' % (ca_b64, args.port, token))
    kpath = os.path.join(d, 'kubeconfig')
    fd = os.open(kpath + '.tmp', os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.write(fd, kc.encode())
    os.close(fd)
    os.replace(kpath + '.tmp', kpath)
    print(kpath)

def cleanup(d):
    """Removes what pods created on the host (missing mount points, working
    folders) when nothing runs any more: only empty folders and empty files."""
    log = os.path.join(os.path.abspath(d), 'created-on-host.txt')
    if not os.path.exists(log):
        return
    left = []
    for top in dict.fromkeys(line.strip() for line in open(log) if line.strip()):
        if not os.path.lexists(top):
            continue
        try:
            if os.path.isdir(top) and not os.path.islink(top):
                for root, dirs, files in os.walk(top, topdown=False):
                    for f in files:
                        if os.path.getsize(os.path.join(root, f)) == 0:
                            os.unlink(os.path.join(root, f))
                    os.rmdir(root)
            elif os.path.getsize(top) == 0:
                os.unlink(top)
            else:
                left.append(top)
        except OSError:
            left.append(top)
    with open(log, 'w') as f:
        f.writelines(p + '\n' for p in left)

# ---------------------------------------------------------------- bootstrap


def node_object(n):
    gpus = int(n.get('gpus', 0))
    labels = {'beta.kubernetes.io/arch': 'amd64', 'beta.kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64',
              'kubernetes.io/hostname': n['name'], 'kubernetes.io/os': 'linux'}
    cap = {'cpu': n['cpu'], 'memory': n['memory'], 'pods': '110', 'ephemeral-storage': '1055762868Ki',
           'hugepages-1Gi': '0', 'hugepages-2Mi': '0'}
    alloc = dict(cap, **{'ephemeral-storage': '972991057538'})
    spec = {'podCIDR': '10.244.%d.0/24' % n['index'], 'podCIDRs': ['10.244.%d.0/24' % n['index']]}
    if gpus:
        labels.update({'nvidia.com/gpu.product': n['product'], 'nvidia.com/gpu.count': str(gpus),
                       'nvidia.com/gpu.present': 'true'})
        cap['nvidia.com/gpu'] = alloc['nvidia.com/gpu'] = str(gpus)
        spec['taints'] = [{'key': 'nvidia.com/gpu', 'value': 'present', 'effect': 'NoSchedule'}]
    labels.update(n.get('labels', {}))
    now = rfc3339()
    conds = [{'type': t, 'status': 'False', 'lastHeartbeatTime': now, 'lastTransitionTime': now, 'reason': r,
              'message': m} for t, r, m in (
        ('MemoryPressure', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'),
        ('DiskPressure', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
        ('PIDPressure', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'))]
    conds.append({'type': 'Ready', 'status': 'True', 'lastHeartbeatTime': now, 'lastTransitionTime': now,
                  'reason': 'KubeletReady', 'message': 'kubelet is posting ready status'})
    return {'metadata': {'name': n['name'], 'labels': labels,
                         'annotations': {'node.alpha.kubernetes.io/ttl': '0',
                                         'volumes.kubernetes.io/controller-managed-attach-detach': 'true'}},
            'spec': spec,
            'status': {'capacity': cap, 'allocatable': alloc, 'conditions': conds,
                       'addresses': [{'type': 'InternalIP', 'address': '127.0.0.1'},
                                     {'type': 'Hostname', 'address': n['name']}],
                       'daemonEndpoints': {'kubeletEndpoint': {'Port': 10250}},
                       'nodeInfo': {'machineID': '%032x' % (n['index'] + 1), 'systemUUID': '%032x' % (n['index'] + 7),
                                    'bootID': '%032x' % (n['index'] + 13), 'kernelVersion': platform.release(),
                                    'osImage': 'Ubuntu 22.04.4 LTS', 'containerRuntimeVersion': 'containerd://1.7.22',
                                    'kubeletVersion': 'v1.32.4', 'kubeProxyVersion': 'v1.32.4',
                                    'operatingSystem': 'linux', 'architecture': 'amd64'}}}


def bootstrap(store, api, cfg):
    with store.lock:
        for ns in ('default', 'kube-system', 'kube-public', 'kube-node-lease'):
            if store.peek('namespaces', '', ns) is None:
                api.create_internal('namespaces', {'metadata': {'name': ns}})
        for i, n in enumerate(cfg['nodes']):
            if store.peek('nodes', '', n['name']) is None:
                api.create_internal('nodes', node_object(dict(n, index=i + 1)))
        if store.peek('services', 'default', 'kubernetes') is None:
            api.create_internal('services', {'metadata': {'name': 'kubernetes', 'namespace': 'default', 'labels': {
                'component': 'apiserver', 'provider': 'kubernetes'}}, 'spec': {
                'clusterIP': '10.96.0.1', 'ports': [{'name': 'https', 'port': 443, 'targetPort': 6443}]}})

# ---------------------------------------------------------------------- serve


def serve(args):
    cfg = json.load(open(args.config))
    if os.geteuid() != 0:
        sys.exit('fake_apiserver.py serve: run as root (the kubelet unshares namespaces and switches user)')
    token = open(cfg['token_file']).read().strip()
    synthetic = bool(args.synthetic_nodes or args.synthetic_pods)
    store = Store(window=int(cfg.get('watch_window', 2000)),
                  state_path=None if synthetic else os.path.join(cfg['dir'], 'state.json'))
    restarted = store.load()
    api = Api(store, cfg)
    ctrl = Controllers(store, api, cfg)
    kubelet = Kubelet(store, api, cfg, ctrl.emit)
    api.kubelet = kubelet
    bootstrap(store, api, cfg)
    if synthetic:
        import kube_synthetic
        info = kube_synthetic.populate(store, args.synthetic_nodes, args.synthetic_pods)
        sys.stderr.write('synthetic cluster: %s\n' % json.dumps(info))
    with store.lock:
        kubelet.recover()
        ctrl.adopt_after_restart()
    store.dirty = True
    store.start_saver()
    stop = threading.Event()

    def manager():
        # The launchers' parent-death signal is tied to this thread: it must
        # live as long as the server, whatever a controller step throws.
        while not stop.is_set():
            with store.lock:
                gen = store.generation
                for step in (ctrl.gc, ctrl.jobs, ctrl.schedule, kubelet.sync):
                    try:
                        step()
                    except Exception:  # noqa: BLE001
                        traceback.print_exc()
                busy = store.generation != gen
                if not busy:
                    store.changed.wait(timeout=0.15)
            if busy:
                time.sleep(0.02)

    mt = threading.Thread(target=manager, name='manager', daemon=True)
    mt.start()
    httpd = kube_http.make_server(cfg, api, token, cfg['cert'], cfg['key'])

    def on_signal(signum, _frame):
        if not stop.is_set():
            stop.set()
            threading.Thread(target=httpd.shutdown, daemon=True).start()
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    sys.stderr.write('kappa fake apiserver on https://127.0.0.1:%s (pid %d, %s)\n' % (
        cfg['port'], os.getpid(), 'state reloaded' if restarted else 'fresh state'))
    sys.stderr.flush()
    try:
        httpd.serve_forever(poll_interval=0.5)
    finally:
        stop.set()
        mt.join(timeout=2)
        kubelet.kill_all()
        cleanup(cfg['dir'])
        if store.state_path:
            store.dirty = True
            store.save()
        sys.stderr.write('kappa fake apiserver stopped\n')


def main():
    ap = argparse.ArgumentParser(prog='fake_apiserver.py')
    sub = ap.add_subparsers(dest='cmd', required=True)
    s = sub.add_parser('setup')
    s.add_argument('--dir', required=True)
    s.add_argument('--port', type=int, default=7310)
    s.add_argument('--user', default='skyuser1')
    s.add_argument('--hide', action='append', default=[])
    c = sub.add_parser('cleanup', help='remove the mount points pods created on the host (nothing may run)')
    c.add_argument('--dir', required=True)
    v = sub.add_parser('serve')
    v.add_argument('--config', required=True)
    v.add_argument('--synthetic-nodes', type=int, default=0)
    v.add_argument('--synthetic-pods', type=int, default=0)
    args = ap.parse_args()
    sys.stderr.reconfigure(line_buffering=True)
    if args.cmd == 'cleanup':
        cleanup(args.dir)
    else:
        (setup if args.cmd == 'setup' else serve)(args)


if __name__ == '__main__':
    main()
