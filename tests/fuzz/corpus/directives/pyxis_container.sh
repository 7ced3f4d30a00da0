#!/bin/bash
#SBATCH --nodes=2
#SBATCH --gpus-per-node=8
#SBATCH --ntasks-per-node=8
#SBATCH --time=04:00:00
#SBATCH --container-image="nvcr.io#nvidia/pytorch:24.01-py3"
#SBATCH --container-mounts=/scratch:/scratch
#SBATCH --sky-any-cluster=beta,gamma

srun python -m torch.distributed.run --nproc_per_node=8 train.py
