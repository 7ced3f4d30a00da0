#!/usr/bin/python3 -I -S
# The fake kubelet's container runtime: starts one container of a pod as a
# local process. Run as root by fake_apiserver.py (never by hand):
#
#   pod_launcher.py SPEC.json PARENT_PID STATUS_FD
#
# It unshares mount, UTS and PID namespaces, makes every mount private, sets
# the pod's hostname, hides the host's Slurm commands (read-only overlays with
# whiteouts over their folders), hides configured paths (an empty tmpfs with
# mode 000), bind-mounts the kubelet's hosts file over /etc/hosts and the pod's
# volumes at their mount paths, then forks the container process: PID 1 of the
# new PID namespace, with /proc remounted, in its own session, as the
# configured user (its groups included), with exactly the environment of the
# spec, in its working directory. The container's stdout and stderr go through
# this process into a CRI-format log file ("<RFC3339Nano> stdout|stderr F|P
# <text>"). An exec failure is written to STATUS_FD (closed on a successful
# exec); the launcher's exit status is the container's (128+N if killed by
# signal N). SIGTERM is forwarded to the container; when the launcher dies,
# the container is killed (parent-death signal), and with it everything in
# its PID namespace.
import ctypes
import json
import os
import select
import signal
import sys
import time

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWPID = 0x20000000
MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
PR_SET_PDEATHSIG = 1

libc = ctypes.CDLL(None, use_errno=True)
libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]


def die(msg, code=128):
    sys.stderr.write('pod_launcher: %s\n' % msg)
    os._exit(code)


def check(rc, what):
    if rc != 0:
        e = ctypes.get_errno()
        raise OSError(e, '%s: %s' % (what, os.strerror(e)))


def mount(src, target, fstype, flags, data=None):
    check(libc.mount(src.encode() if src else None, target.encode(), fstype.encode() if fstype else None,
                     flags, data.encode() if data else None), 'mount %s on %s' % (src or fstype, target))


def set_pdeathsig(expected_parent=None, life_fd=None):
    """SIGKILL when the parent dies; exits at once if it is already gone. In
    a new PID namespace getppid() is 0, so the child checks a pipe instead:
    EOF on LIFE_FD means the launcher (the write end's holder) has died."""
    check(libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), 'prctl')
    if expected_parent is not None and os.getppid() != expected_parent:
        os._exit(137)
    if life_fd is not None and select.select([life_fd], [], [], 0)[0]:
        os._exit(137)


def rfc3339nano():
    ns = time.time_ns()
    return time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime(ns // 10**9)) + '.%09dZ' % (ns % 10**9)


def note_created(spec, path):
    """Records the topmost missing ancestor of PATH before it is created on
    the host (mount points, working folders), so that the kubelet can remove
    it again once no pod runs (fake_apiserver.py cleanup)."""
    top = None
    p = os.path.abspath(path)
    while p != '/' and not os.path.lexists(p):
        top = p
        p = os.path.dirname(p)
    if top and spec.get('created_log'):
        with open(spec['created_log'], 'a') as f:
            f.write(top + '\n')


def setup_mounts(spec):
    check(libc.unshare(CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWPID), 'unshare')
    mount(None, '/', None, MS_REC | MS_PRIVATE)
    hn = spec['hostname'].encode()
    check(libc.sethostname(hn, len(hn)), 'sethostname')
    for whiteouts, target in spec.get('hide_dirs', []):
        mount('overlay', target, 'overlay', MS_RDONLY, 'lowerdir=%s:%s' % (whiteouts, target))
    for p in spec.get('hidden_paths', []):
        if os.path.isdir(p):
            mount('tmpfs', p, 'tmpfs', MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY, 'mode=000,size=4k')
    for src, target in (('hosts_file', '/etc/hosts'), ('hostname_file', '/etc/hostname')):
        if spec.get(src) and os.path.exists(target):
            mount(spec[src], target, None, MS_BIND)
    for m in spec.get('mounts', []):
        target, src = m['target'], m['source']
        if os.path.isdir(src):
            note_created(spec, target)
            os.makedirs(target, exist_ok=True)
        elif not os.path.exists(target):
            note_created(spec, target)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            open(target, 'a').close()
        mount(src, target, None, MS_BIND | MS_REC)
        if m.get('readOnly'):
            mount(None, target, None, MS_BIND | MS_REMOUNT | MS_RDONLY)


def child(spec, status_fd, out_w, err_w, life_r):
    """PID 1 of the container."""
    try:
        os.setsid()
        mount('proc', '/proc', 'proc', MS_NOSUID | MS_NODEV | MS_NOEXEC)
        cwd = spec['cwd']
        if not os.path.isdir(cwd):
            note_created(spec, cwd)
            os.makedirs(cwd, exist_ok=True)
        null = os.open('/dev/null', os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        for fd in (null, out_w, err_w):
            if fd > 2:
                os.close(fd)
        os.initgroups(spec['user'], spec['gid'])
        os.setgid(spec['gid'])
        os.setuid(spec['uid'])
        # The parent-death signal is cleared by a change of credentials.
        set_pdeathsig(life_fd=life_r)
        os.close(life_r)
        os.chdir(cwd)
        for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGPIPE, signal.SIGCHLD):
            signal.signal(s, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        os.set_inheritable(status_fd, False)
        os.umask(0o022)
    except Exception as e:  # noqa: BLE001
        os.write(status_fd, ('failed to create containerd task: failed to create shim task: OCI runtime '
                             'create failed: runc create failed: unable to start container process: %s: unknown'
                             % e).encode())
        os._exit(128)
    argv, env = spec['argv'], spec['env']
    try:
        os.execvpe(argv[0], argv, env)
    except OSError as e:
        if e.errno == 2:
            why = 'exec: "%s": executable file not found in $PATH' % argv[0]
        elif e.errno == 13:
            why = 'exec: "%s": permission denied' % argv[0]
        else:
            why = 'exec: "%s": %s' % (argv[0], e.strerror)
        os.write(status_fd, ('failed to create containerd task: failed to create shim task: OCI runtime create '
                             'failed: runc create failed: unable to start container process: %s: unknown'
                             % why).encode())
        os._exit(128)


def main():
    spec_path, parent, status_fd = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    set_pdeathsig(expected_parent=parent)
    with open(spec_path) as f:
        spec = json.load(f)
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    try:
        setup_mounts(spec)
    except Exception as e:  # noqa: BLE001
        os.write(status_fd, ('failed to create containerd task: failed to create shim task: OCI runtime create '
                             'failed: runc create failed: unable to start container process: error during '
                             'container init: %s: unknown' % e).encode())
        os._exit(128)
    life_r, life_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(out_r)
        os.close(err_r)
        os.close(life_w)
        child(spec, status_fd, out_w, err_w, life_r)
    os.close(life_r)
    os.close(status_fd)
    os.close(out_w)
    os.close(err_w)
    signal.signal(signal.SIGTERM, lambda *_: os.kill(pid, signal.SIGTERM))
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    log = open(spec['log'], 'ab', buffering=0)
    bufs = {out_r: b'', err_r: b''}
    names = {out_r: b'stdout', err_r: b'stderr'}
    live = [out_r, err_r]

    def emit(fd, data, tag):
        log.write(rfc3339nano().encode() + b' ' + names[fd] + b' ' + tag + b' ' + data + b'\n')

    while live:
        try:
            ready, _, _ = select.select(live, [], [])
        except InterruptedError:
            continue
        for fd in ready:
            data = os.read(fd, 65536)
            if not data:
                if bufs[fd]:
                    emit(fd, bufs[fd], b'P')
                    bufs[fd] = b''
                live.remove(fd)
                os.close(fd)
                continue
            buf = bufs[fd] + data
            *lines, rest = buf.split(b'\n')
            for line in lines:
                emit(fd, line, b'F')
            if len(rest) >= 16384:
                emit(fd, rest, b'P')
                rest = b''
            bufs[fd] = rest
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
    log.close()
    if os.WIFSIGNALED(status):
        os._exit(128 + os.WTERMSIG(status))
    os._exit(os.WEXITSTATUS(status))


if __name__ == '__main__':
    main()
