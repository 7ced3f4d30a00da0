# A big generated cluster for benchmarks: realistic GPU nodes and Job pods
# (about 3 KB of JSON each) that the kubelet never runs. The nodes carry the
# taint kappa.skyslurm.dev/synthetic=true:NoSchedule so that real pods keep to
# the real nodes. Objects are serialized once here; lists join those bytes.
import hashlib
import random
import time
import uuid

from kube_util import rfc3339

POOLS = [('a100', 'NVIDIA-A100-SXM4-80GB', 8, 'a2-ultragpu-8g', '96', '1360Gi'),
         ('h100', 'NVIDIA-H100-80GB-HBM3', 8, 'a3-highgpu-8g', '208', '1872Gi'),
         ('l4', 'NVIDIA-L4', 4, 'g2-standard-48', '48', '192Gi'),
         ('cpu', None, 0, 'n2-standard-32', '32', '128Gi')]
ZONES = ['us-central1-a', 'us-central1-b', 'us-central1-c', 'us-central1-f']
IMAGES = ['nvcr.io/nvidia/pytorch:24.01-py3', 'docker.io/library/ubuntu:22.04',
          'us-docker.pkg.dev/team/train/trainer:v1.8.2', 'nvcr.io/nvidia/tensorflow:24.01-tf2-py3']


def _uid(rnd):
    return str(uuid.UUID(int=rnd.getrandbits(128), version=4))


def make_nodes(n, rnd, created):
    out = []
    for i in range(n):
        pool, product, gpus, itype, cpu, mem = POOLS[i % len(POOLS)]
        name = 'gke-synth-%s-pool-%s-%05d' % (pool, hashlib.sha1(pool.encode()).hexdigest()[:4], i)
        labels = {'beta.kubernetes.io/arch': 'amd64', 'beta.kubernetes.io/instance-type': itype,
                  'beta.kubernetes.io/os': 'linux', 'cloud.google.com/gke-nodepool': pool + '-pool',
                  'cloud.google.com/machine-family': itype.split('-')[0], 'kubernetes.io/arch': 'amd64',
                  'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux',
                  'node.kubernetes.io/instance-type': itype, 'topology.kubernetes.io/region': 'us-central1',
                  'topology.kubernetes.io/zone': ZONES[i % len(ZONES)], 'kappa.skyslurm.dev/synthetic': 'true'}
        taints = [{'key': 'kappa.skyslurm.dev/synthetic', 'value': 'true', 'effect': 'NoSchedule'}]
        cap = {'cpu': cpu, 'memory': mem, 'pods': '110', 'ephemeral-storage': '2058693Mi', 'hugepages-1Gi': '0',
               'hugepages-2Mi': '0'}
        if gpus:
            labels.update({'nvidia.com/gpu.product': product, 'nvidia.com/gpu.count': str(gpus),
                           'nvidia.com/gpu.present': 'true', 'cloud.google.com/gke-accelerator': product.lower()})
            taints.append({'key': 'nvidia.com/gpu', 'value': 'present', 'effect': 'NoSchedule'})
            cap['nvidia.com/gpu'] = str(gpus)
        ip = '10.%d.%d.%d' % (128 + i // 65536, (i // 256) % 256, i % 256)
        out.append({'metadata': {'name': name, 'uid': _uid(rnd), 'creationTimestamp': created, 'labels': labels,
                                 'annotations': {'node.alpha.kubernetes.io/ttl': '0',
                                                 'volumes.kubernetes.io/controller-managed-attach-detach': 'true'}},
                    'spec': {'podCIDR': '10.%d.%d.0/24' % (i // 256 % 256, i % 256),
                             'providerID': 'gce://synthetic/%s/%s' % (ZONES[i % len(ZONES)], name), 'taints': taints},
                    'status': {'capacity': cap, 'allocatable': dict(cap),
                               'conditions': [{'type': t, 'status': 'False', 'lastHeartbeatTime': created,
                                               'lastTransitionTime': created, 'reason': r, 'message': m}
                                              for t, r, m in (('MemoryPressure', 'KubeletHasSufficientMemory',
                                                               'kubelet has sufficient memory available'),
                                                              ('DiskPressure', 'KubeletHasNoDiskPressure',
                                                               'kubelet has no disk pressure'),
                                                              ('PIDPressure', 'KubeletHasSufficientPID',
                                                               'kubelet has sufficient PID available'))] +
                               [{'type': 'Ready', 'status': 'True', 'lastHeartbeatTime': created,
                                 'lastTransitionTime': created, 'reason': 'KubeletReady',
                                 'message': 'kubelet is posting ready status'}],
                               'addresses': [{'type': 'InternalIP', 'address': ip},
                                             {'type': 'Hostname', 'address': name}],
                               'daemonEndpoints': {'kubeletEndpoint': {'Port': 10250}},
                               'nodeInfo': {'machineID': rnd.getrandbits(128).to_bytes(16, 'big').hex(),
                                            'systemUUID': _uid(rnd), 'bootID': _uid(rnd),
                                            'kernelVersion': '6.1.100+', 'osImage': 'Container-Optimized OS from Google',
                                            'containerRuntimeVersion': 'containerd://1.7.22',
                                            'kubeletVersion': 'v1.32.4-gke.1000', 'kubeProxyVersion': 'v1.32.4-gke.1000',
                                            'operatingSystem': 'linux', 'architecture': 'amd64'}}})
    return out


def make_pods(n, nodes, rnd, created_base):
    """N pods of Indexed Jobs of 8 pods, spread over the nodes; ~8% Pending."""
    out = []
    gpu_nodes = [nd for nd in nodes if 'nvidia.com/gpu' in nd['status']['allocatable']] or nodes
    for i in range(n):
        job_no, idx = divmod(i, 8)
        team = 'team-%02d' % (job_no % 20)
        job = 'train-%06d' % job_no
        juid = str(uuid.UUID(int=job_no + 1, version=4))
        name = '%s-%d-%s' % (job, idx, ''.join(rnd.choice('bcdfghjklmnpqrstvwxz2456789') for _ in range(5)))
        pending = rnd.random() < 0.08
        node = None if pending else gpu_nodes[rnd.randrange(len(gpu_nodes))]
        created = rfc3339(created_base + i * 0.05)
        gpus = str(rnd.choice([1, 2, 4, 8]))
        image = IMAGES[job_no % len(IMAGES)]
        labels = {'batch.kubernetes.io/controller-uid': juid, 'batch.kubernetes.io/job-completion-index': str(idx),
                  'batch.kubernetes.io/job-name': job, 'controller-uid': juid, 'job-name': job,
                  'app.kubernetes.io/name': 'trainer', 'app.kubernetes.io/part-of': team,
                  'skyslurm.dev/job-id': str(100000 + job_no)}
        conds_true = ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled']
        pod = {'metadata': {
            'name': name, 'generateName': '%s-%d-' % (job, idx), 'namespace': team, 'uid': _uid(rnd),
            'creationTimestamp': created, 'labels': labels,
            'annotations': {'batch.kubernetes.io/job-completion-index': str(idx),
                            'skyslurm.dev/submitted-by': 'user%03d' % (i % 300),
                            'skyslurm.dev/script-sha256': hashlib.sha256(job.encode()).hexdigest()},
            'ownerReferences': [{'apiVersion': 'batch/v1', 'kind': 'Job', 'name': job, 'uid': juid,
                                 'controller': True, 'blockOwnerDeletion': True}]},
            'spec': {
                'volumes': [{'name': 'dshm', 'emptyDir': {'medium': 'Memory', 'sizeLimit': '16Gi'}}],
                'containers': [{
                    'name': 'main', 'image': image, 'command': ['/bin/bash', '-lc'],
                    'args': ['torchrun --nnodes=8 --node_rank=$JOB_COMPLETION_INDEX train.py --config cfg.yaml'],
                    'env': [{'name': 'JOB_COMPLETION_INDEX', 'valueFrom': {'fieldRef': {'apiVersion': 'v1',
                             'fieldPath': "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}},
                            {'name': 'NCCL_DEBUG', 'value': 'WARN'}],
                    'resources': {'limits': {'cpu': '16', 'memory': '128Gi', 'nvidia.com/gpu': gpus},
                                  'requests': {'cpu': '16', 'memory': '128Gi', 'nvidia.com/gpu': gpus}},
                    'volumeMounts': [{'name': 'dshm', 'mountPath': '/dev/shm'}],
                    'terminationMessagePath': '/dev/termination-log', 'terminationMessagePolicy': 'File',
                    'imagePullPolicy': 'IfNotPresent'}],
                'restartPolicy': 'Never', 'terminationGracePeriodSeconds': 30, 'dnsPolicy': 'ClusterFirst',
                'serviceAccountName': 'default', 'serviceAccount': 'default', 'securityContext': {},
                'hostname': '%s-%d' % (job, idx), 'subdomain': job, 'schedulerName': 'default-scheduler',
                'tolerations': [{'key': 'nvidia.com/gpu', 'operator': 'Exists', 'effect': 'NoSchedule'},
                                {'key': 'kappa.skyslurm.dev/synthetic', 'operator': 'Exists'},
                                {'key': 'node.kubernetes.io/not-ready', 'operator': 'Exists', 'effect': 'NoExecute',
                                 'tolerationSeconds': 300},
                                {'key': 'node.kubernetes.io/unreachable', 'operator': 'Exists',
                                 'effect': 'NoExecute', 'tolerationSeconds': 300}],
                'priority': 0, 'enableServiceLinks': True, 'preemptionPolicy': 'PreemptLowerPriority'},
            'status': {'phase': 'Pending' if pending else 'Running', 'qosClass': 'Guaranteed'}}
        st = pod['status']
        if pending:
            st['conditions'] = [{'type': 'PodScheduled', 'status': 'False', 'lastProbeTime': None,
                                 'lastTransitionTime': created, 'reason': 'Unschedulable',
                                 'message': '0/%d nodes are available: %d Insufficient nvidia.com/gpu. preemption: '
                                            '0/%d nodes are available: %d No preemption victims found for incoming '
                                            'pod.' % (len(nodes), len(nodes), len(nodes), len(nodes))}]
        else:
            pod['spec']['nodeName'] = node['metadata']['name']
            pip = '10.%d.%d.%d' % (64 + i // 65536, (i // 256) % 256, i % 256)
            hip = node['status']['addresses'][0]['address']
            st['conditions'] = [{'type': t, 'status': 'True', 'lastProbeTime': None, 'lastTransitionTime': created}
                                for t in conds_true]
            st.update({'hostIP': hip, 'hostIPs': [{'ip': hip}], 'podIP': pip, 'podIPs': [{'ip': pip}],
                       'startTime': created,
                       'containerStatuses': [{'name': 'main', 'state': {'running': {'startedAt': created}},
                                              'lastState': {}, 'ready': True, 'restartCount': 0, 'image': image,
                                              'imageID': image.rsplit(':', 1)[0] + '@sha256:' +
                                              hashlib.sha256(image.encode()).hexdigest(),
                                              'containerID': 'containerd://' + hashlib.sha256(
                                                  name.encode()).hexdigest(), 'started': True}]})
        out.append(pod)
    return out


def populate(store, n_nodes, n_pods, seed=42):
    """Adds the synthetic nodes, namespaces and pods to STORE (no events)."""
    t0 = time.time()
    rnd = random.Random(seed)
    created = rfc3339(time.time() - 3 * 86400)
    nodes = make_nodes(n_nodes, rnd, created)
    pods = make_pods(n_pods, nodes, rnd, time.time() - 2 * 86400)
    with store.lock:
        rv = store.rv
        nss = []
        for t in range(20 if n_pods else 0):
            name = 'team-%02d' % t
            if store.peek('namespaces', '', name) is None:
                nss.append({'metadata': {'name': name, 'uid': _uid(rnd), 'creationTimestamp': created,
                                         'labels': {'kubernetes.io/metadata.name': name}},
                            'spec': {'finalizers': ['kubernetes']}, 'status': {'phase': 'Active'}})
        for objs in (nodes, nss, pods):
            for o in objs:
                rv += 1
                o['metadata']['resourceVersion'] = str(rv)
        store.rv = rv
        store.floor = rv
        store.bulk_load('nodes', nodes, synthetic=True, keep_obj=True)
        store.bulk_load('namespaces', nss, synthetic=True, keep_obj=True)
        store.bulk_load('pods', pods, synthetic=True, keep_obj=False)
    sizes = [len(store.data['pods'][k].raw) for k in store.keys['pods'][:200]] if n_pods else [0]
    return {'nodes': len(nodes), 'pods': len(pods), 'seconds': round(time.time() - t0, 1),
            'avg_pod_bytes': sum(sizes) // max(len(sizes), 1)}
