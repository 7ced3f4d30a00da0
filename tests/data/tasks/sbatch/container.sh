#!/bin/bash
#SBATCH --gpus=H100:2
#SBATCH --sky-image=nvcr.io/nvidia/pytorch:24.01-py3
#SBATCH --sky-any-cluster=kappa
echo "in a container"
