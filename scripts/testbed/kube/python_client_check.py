#!/usr/bin/python3
# The kappa essentials through Debian's python3-kubernetes (22.6; install with
# `apt-get install -y python3-kubernetes`): load the kubeconfig, list nodes,
# create a namespaced Job, wait for it through a watch of list_namespaced_job,
# read the pod's log, delete it with propagation_policy Background, and see the
# pods go. Exit status 0 only if everything holds.
#
#   /usr/bin/python3 python_client_check.py [--kubeconfig $TB/kubeconfig] [--namespace default]
import argparse
import os
import sys
import time

try:
    from kubernetes import client, config, watch
    from kubernetes.client.rest import ApiException
except ImportError:
    sys.exit('python_client_check: python3-kubernetes is missing (apt-get install -y python3-kubernetes)')


def step(msg):
    print('python-client: ' + msg, flush=True)


def main():
    ap = argparse.ArgumentParser()
    tb = os.environ.get('TB', os.environ.get('SKYSLURM_TESTBED_DIR', '/tmp/skyslurm-testbed'))
    ap.add_argument('--kubeconfig', default=os.path.join(tb, 'kubeconfig'))
    ap.add_argument('--namespace', default='default')
    args = ap.parse_args()
    ns = args.namespace

    config.load_kube_config(config_file=args.kubeconfig)
    core, batch = client.CoreV1Api(), client.BatchV1Api()

    nodes = core.list_node().items
    gpus = {n.metadata.name: n.status.allocatable.get('nvidia.com/gpu') for n in nodes}
    assert gpus.get('kappa-n1') == '8' and gpus.get('kappa-n3') == '4', gpus
    step('list_node: %s' % ', '.join('%s=%s GPUs' % kv for kv in sorted(gpus.items())))

    marker = 'pyclient-%d' % os.getpid()
    job = client.V1Job(
        api_version='batch/v1', kind='Job',
        metadata=client.V1ObjectMeta(generate_name='pycheck-', labels={'suite': 'kappa-python'}),
        spec=client.V1JobSpec(backoff_limit=0, template=client.V1PodTemplateSpec(spec=client.V1PodSpec(
            restart_policy='Never',
            tolerations=[client.V1Toleration(key='nvidia.com/gpu', operator='Exists', effect='NoSchedule')],
            containers=[client.V1Container(
                name='main', image='docker.io/library/ubuntu:22.04', command=['sh', '-c'],
                args=['echo %s $POD_NAME on $NODE_NAME' % marker],
                env=[client.V1EnvVar(name='POD_NAME', value_from=client.V1EnvVarSource(
                        field_ref=client.V1ObjectFieldSelector(field_path='metadata.name'))),
                     client.V1EnvVar(name='NODE_NAME', value_from=client.V1EnvVarSource(
                        field_ref=client.V1ObjectFieldSelector(field_path='spec.nodeName')))],
                resources=client.V1ResourceRequirements(requests={'cpu': '500m', 'memory': '256Mi'}))]))))
    created = batch.create_namespaced_job(ns, job)
    name = created.metadata.name
    assert created.spec.selector.match_labels.get('batch.kubernetes.io/controller-uid') == created.metadata.uid
    step('create_namespaced_job: %s (uid %s, rv %s)' % (name, created.metadata.uid,
                                                       created.metadata.resource_version))

    done, events = None, 0
    w = watch.Watch()
    for ev in w.stream(batch.list_namespaced_job, ns, field_selector='metadata.name=' + name, timeout_seconds=60):
        events += 1
        conds = {c.type: c.status for c in (ev['object'].status.conditions or [])}
        if conds.get('Complete') == 'True' or conds.get('Failed') == 'True':
            done = 'Complete' if conds.get('Complete') == 'True' else 'Failed'
            w.stop()
    assert done == 'Complete', 'job ended %s after %d watch events' % (done, events)
    step('watch list_namespaced_job: Complete after %d events' % events)

    pods = core.list_namespaced_pod(ns, label_selector='job-name=' + name).items
    assert len(pods) == 1 and pods[0].status.phase == 'Succeeded', [(p.metadata.name, p.status.phase) for p in pods]
    pod = pods[0]
    log = core.read_namespaced_pod_log(pod.metadata.name, ns)
    want = '%s %s on %s' % (marker, pod.metadata.name, pod.spec.node_name)
    assert want in log, 'log %r lacks %r' % (log, want)
    step('read_namespaced_pod_log: %r' % log.strip())

    st = batch.delete_namespaced_job(name, ns, propagation_policy='Background')
    step('delete_namespaced_job (Background): %s' % st.status)
    for _ in range(100):
        if not core.list_namespaced_pod(ns, label_selector='job-name=' + name).items:
            break
        time.sleep(0.1)
    else:
        raise AssertionError('the pods of %s are still there' % name)
    try:
        batch.read_namespaced_job(name, ns)
        raise AssertionError('job %s still readable' % name)
    except ApiException as e:
        assert e.status == 404, e
    step('pods gone, read_namespaced_job -> 404')
    return 0


if __name__ == '__main__':
    try:
        sys.exit(main())
    except (AssertionError, ApiException) as e:
        print('python-client: FAILED: %s' % e, file=sys.stderr)
        sys.exit(1)
